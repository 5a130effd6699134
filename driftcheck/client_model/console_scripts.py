"""The commands a client's own packaging installs: a `vllm` console script of the client's replaces vLLM's; and the
vLLM plugins it registers (entry points in a `vllm.*` group, which vLLM loads in its own processes).

vllm-omni's `pyproject.toml` says `[project.scripts] vllm = "vllm_omni.entrypoints.cli.main:main"`: once it is
installed, `vllm serve MODEL --omni` in its own examples runs its parser, which handles `--omni` and hands the rest to
vLLM's. Whether a flag reaches vLLM's parser is then the client's code's decision, so DC111 cannot call an unknown
flag certain. Read from the places packaging tools take console scripts from: `pyproject.toml` (`[project.scripts]`,
`[tool.poetry.scripts]`), `setup.cfg` (`[options.entry_points] console_scripts`), a `setup.py`'s
`console_scripts` list, and a built distribution's `*.dist-info/entry_points.txt`.
"""

from __future__ import annotations

import configparser
import re
import tomllib

from driftcheck.client_model.client import kept_on

# `"vllm = pkg.cli:main"` (or `vllm=pkg.cli:main`) in a setup.py's entry points
_SETUP_PY_SCRIPT = re.compile(r"""["']\s*([\w.-]+)\s*=\s*[\w.]+\s*:\s*[\w.]+\s*["']""")


def installed_commands(client) -> dict[str, str]:
    """Command name -> where the client's packaging declares it ("pyproject.toml [project.scripts]"), read once per
    client (kept on its `ClientSource`)."""
    return kept_on(client, "_installed_commands", client.files, lambda: _read(client.tree))


def _read(tree) -> dict[str, str]:
    return _declared(tree, ("scripts", "scripts"), lambda t: list(t),
                     lambda ini: _ini_values(ini, "options.entry_points", "console_scripts"),
                     "console_scripts", _SETUP_PY_SCRIPT,
                     lambda ini: list(ini["console_scripts"]) if ini.has_section("console_scripts") else [])


def _declared(tree, pyproject_keys: tuple[str, str], from_table, from_setup_cfg, setup_py_word: str, setup_py_pattern,
              from_entry_points) -> dict[str, str]:
    """Name -> where it is declared, over the packaging files: pyproject tables (`from_table(table)`), setup.cfg
    (`from_setup_cfg(parser)`), a setup.py's text after `setup_py_word`, and a wheel's entry_points.txt
    (`from_entry_points(parser)`); the first place that declares a name wins."""
    out: dict[str, str] = {}
    for where, table in _pyproject_tables(tree, pyproject_keys):
        for name in from_table(table):
            out.setdefault(str(name), where)
    for rel in _root_files(tree, "setup.cfg"):
        ini = _ini(_text(tree, rel))
        for name in from_setup_cfg(ini) if ini is not None else ():
            out.setdefault(name, f"{rel} [options.entry_points]")
    for rel in _root_files(tree, "setup.py"):
        text = _text(tree, rel)
        if setup_py_word in text:
            for name in setup_py_pattern.findall(text[text.index(setup_py_word):]):
                out.setdefault(name, f"{rel} {setup_py_word}")
    for rel in tree.iter_files("", suffix="entry_points.txt"):
        if rel.count("/") == 1 and rel.split("/")[0].endswith(".dist-info"):
            ini = _ini(_text(tree, rel))
            for name in from_entry_points(ini) if ini is not None else ():
                out.setdefault(name, f"{rel} [{name if name.startswith('vllm.') else 'console_scripts'}]")
    return out


# `"vllm.general_plugins": [...]` in a setup.py's entry_points
_SETUP_PY_GROUP = re.compile(r"""["'](vllm\.[\w.]+)["']\s*:""")


def plugin_groups(client) -> dict[str, str]:
    """vLLM plugin group ("vllm.general_plugins") -> where the client's packaging registers an entry point in it
    ("pyproject.toml [project.entry-points]"): vLLM's `load_general_plugins()` runs each such entry point in its own
    processes, so code the client's plugin runs (patches of vLLM's classes) is in effect there. Read once per client."""
    return kept_on(client, "_plugin_groups", client.files, lambda: _read_groups(client.tree))


def _read_groups(tree) -> dict[str, str]:
    return _declared(tree, ("entry-points", "plugins"), _vllm_groups,
                     lambda ini: _vllm_groups({k: v.strip() for k, v in ini["options.entry_points"].items()})
                     if ini.has_section("options.entry_points") else [],
                     "entry_points", _SETUP_PY_GROUP, lambda ini: _vllm_groups({g: list(ini[g]) for g in ini.sections()}))


def _vllm_groups(table: dict) -> list[str]:
    """The entry-point groups of `table` (group -> its entries) that vLLM loads and that name an entry."""
    return [str(g) for g, entries in table.items() if str(g).startswith("vllm.") and entries]


def _pyproject_tables(tree, keys: tuple[str, str]):
    """("pyproject.toml [project.<a>]", table) and ("... [tool.poetry.<b>]", table) for `keys` (a, b), where a table."""
    project, poetry = keys
    for rel in _root_files(tree, "pyproject.toml"):
        data = _toml(tree, rel)
        for section, table in ((f"[project.{project}]", data.get("project", {}).get(project)),
                               (f"[tool.poetry.{poetry}]", data.get("tool", {}).get("poetry", {}).get(poetry))):
            if isinstance(table, dict):
                yield f"{rel} {section}", table


def _root_files(tree, name: str) -> list[str]:
    """`name` at the tree's root, or one folder down (an sdist's `pkg-1.0/pyproject.toml`)."""
    found = [name] if _is_file(tree, name) else []
    return found or [rel for rel in tree.iter_files("", suffix=name) if rel.count("/") == 1 and rel.endswith("/" + name)]


def _is_file(tree, rel: str) -> bool:
    try:
        return tree.is_file(rel)
    except Exception:  # a tree that cannot say: nothing declared there
        return False


def _text(tree, rel: str) -> str:
    try:
        return tree.read_bytes(rel).decode("utf-8", errors="replace")
    except Exception:  # unreadable: it declares nothing driftcheck can see
        return ""


def _toml(tree, rel: str) -> dict:
    try:
        return tomllib.loads(_text(tree, rel))
    except tomllib.TOMLDecodeError:
        return {}


def _ini(text: str) -> "configparser.ConfigParser | None":
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        parser.read_string(text)
    except configparser.Error:
        return None
    return parser


def _ini_values(parser: "configparser.ConfigParser", section: str, key: str) -> list[str]:
    """The names of `key = \n name = a:b` under `[section]` (setup.cfg's console_scripts)."""
    if not parser.has_section(section):
        return []
    value = parser[section].get(key, "")
    return [line.split("=", 1)[0].strip() for line in value.splitlines() if "=" in line]
