"""The commands a client's own packaging installs: a `vllm` console script of the client's replaces vLLM's.

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
    out: dict[str, str] = {}
    for rel in _root_files(tree, "pyproject.toml"):
        data = _toml(tree, rel)
        for section, names in (("[project.scripts]", data.get("project", {}).get("scripts")),
                               ("[tool.poetry.scripts]", data.get("tool", {}).get("poetry", {}).get("scripts"))):
            for name in names if isinstance(names, dict) else ():
                out.setdefault(str(name), f"{rel} {section}")
    for rel in _root_files(tree, "setup.cfg"):
        for name in _ini_scripts(_text(tree, rel), "options.entry_points"):
            out.setdefault(name, f"{rel} [options.entry_points]")
    for rel in _root_files(tree, "setup.py"):
        text = _text(tree, rel)
        if "console_scripts" in text:
            for name in _SETUP_PY_SCRIPT.findall(text[text.index("console_scripts"):]):
                out.setdefault(name, f"{rel} console_scripts")
    for rel in tree.iter_files("", suffix="entry_points.txt"):
        if rel.count("/") == 1 and rel.split("/")[0].endswith(".dist-info"):
            for name in _ini_scripts(_text(tree, rel), "console_scripts", entry_points=True):
                out.setdefault(name, f"{rel} [console_scripts]")
    return out


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


def _ini_scripts(text: str, section: str, entry_points: bool = False) -> list[str]:
    """The console scripts an ini file names: `console_scripts = \\n vllm = a:b` under `[section]` (setup.cfg), or each
    `name = a:b` line of the `[console_scripts]` section itself (entry_points.txt)."""
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        parser.read_string(text)
    except configparser.Error:
        return []
    if not parser.has_section(section):
        return []
    if entry_points:
        return list(parser[section])
    value = parser[section].get("console_scripts", "")
    return [line.split("=", 1)[0].strip() for line in value.splitlines() if "=" in line]
