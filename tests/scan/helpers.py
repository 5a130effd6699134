"""Helpers for scan tests: write tiny fake `vllm/` trees and clients, scan them, find lines.

Synthetic trees are written under pytest's tmp_path (or read from tests/scan/fixtures/), so each
test shows the exact vLLM code a resolution rule has to understand next to its assertions.
"""

from __future__ import annotations

import textwrap
import zipfile
from pathlib import Path

from driftcheck.vllm_model.api_index import ApiIndex
from driftcheck.client_model.client import load_client
from driftcheck.scan.pipeline import ScanOptions, ScanResult, scan
from driftcheck.sources.sources import FolderTree
from driftcheck.sources.targets import resolve_client, resolve_vllm
from driftcheck.client_model.usage import analyse_client
from driftcheck.client_model.uses import Usage

FIXTURES = Path(__file__).resolve().parent / "fixtures"


def write_tree(root: Path, files: dict[str, str]) -> Path:
    """Write {relative path: source} under root (sources are dedented); return root."""
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"))
    return root


def vllm_tree(root: Path, files: dict[str, str]) -> Path:
    """A fake vLLM: every `vllm/...` folder gets an empty __init__.py unless the test wrote one."""
    write_tree(root, files)
    for rel in files:
        parent = Path(rel).parent
        while parent.parts:
            init = root / parent / "__init__.py"
            if not init.exists():
                init.write_text("")
            parent = parent.parent
    return root


def index(tmp_path: Path, files: dict[str, str]) -> ApiIndex:
    """An ApiIndex over a fake vLLM tree (no on-disk cache: each test parses its own files)."""
    return ApiIndex(FolderTree(vllm_tree(tmp_path / "vllm-src", files)), "0.0.test")


def line_of(text: str, needle: str, nth: int = 1) -> int:
    """1-based line of the nth line containing `needle`; fails loudly when there is no such line."""
    hits = [i for i, line in enumerate(text.splitlines(), 1) if needle in line]
    assert len(hits) >= nth, f"{needle!r} occurs on {len(hits)} line(s), wanted #{nth}"
    return hits[nth - 1]


def file_line(root: Path, rel: str, needle: str, nth: int = 1) -> int:
    return line_of((root / rel).read_text(), needle, nth)


def zip_text(zpath: Path, member: str) -> str:
    with zipfile.ZipFile(zpath) as zf:
        return zf.read(member).decode("utf-8")


def scan_trees(tmp_path: Path, vllm_files: dict[str, str], client_files: dict[str, str], only: list[str] | None = None,
               client_vllm: str | None = None, version: str = "0.99.0") -> ScanResult:
    """Scan a fake client folder against a fake vLLM folder, in-process."""
    vroot = vllm_tree(tmp_path / "vllm-src", vllm_files)
    if "vllm/_version.py" not in vllm_files:  # gives findings a version label, as a real tree has
        write_tree(vroot, {"vllm/_version.py": f'__version__ = "{version}"\n'})
    croot = write_tree(tmp_path / "client", client_files)
    vllm = resolve_vllm(str(vroot), tmp_path / "cache")
    client = resolve_client(str(croot), tmp_path / "cache")
    return scan(vllm, [client], ScanOptions(cache_dir=tmp_path / "cache", use_cache=False, only=only, client_vllm=client_vllm))


def scan_against_own(tmp_path: Path, own_files: dict[str, str], own_version: str, vllm_files: dict[str, str],
                     client_files: dict[str, str], only: list[str], version: str) -> ScanResult:
    """`scan_trees` with the client's own vLLM (`--client-vllm`) a second fake tree, `own_files` at `own_version`:
    the baseline the override, replacement and orphan rules compare the target with. No internal error allowed."""
    own = vllm_tree(tmp_path / "own", own_files)
    write_tree(own, {"vllm/_version.py": f'__version__ = "{own_version}"\n'})
    result = scan_trees(tmp_path, vllm_files, client_files, only=only, client_vllm=str(own), version=version)
    assert not result.internal_errors
    return result


def usage_of(tmp_path: Path, vllm_files: dict[str, str], client_files: dict[str, str]) -> Usage:
    """What the client-side inference records, without running any probe."""
    api = index(tmp_path, vllm_files)
    croot = write_tree(tmp_path / "client", client_files)
    return analyse_client(load_client(FolderTree(croot), "client"), api)


def by_rule(result: ScanResult, rule: str) -> list:
    return [f for f in result.findings if f.rule == rule]


def errors(result: ScanResult) -> list:
    return [f for f in result.visible() if f.severity == "error"]


MINIVLLM = FIXTURES / "minivllm"  # a miniature vLLM 0.99.0 (see its README.md)
MINIVLLM_OLD = FIXTURES / "minivllm_old"  # the "previous release" 0.98.0, for DC008 baselines


def scan_client(tmp_path: Path, client_files: dict[str, str], only: list[str] | None = None,
                vllm_root: Path = MINIVLLM, client_vllm: str | None = None) -> ScanResult:
    """Scan a fake client folder against a fixture vLLM tree (read in place)."""
    croot = write_tree(tmp_path / "client", client_files)
    vllm = resolve_vllm(str(vllm_root), tmp_path / "cache")
    client = resolve_client(str(croot), tmp_path / "cache")
    return scan(vllm, [client], ScanOptions(cache_dir=tmp_path / "cache", use_cache=False, only=only, client_vllm=client_vllm))


def fixture_usage(tmp_path: Path, client_files: dict[str, str], vllm_root: Path = MINIVLLM) -> Usage:
    api = ApiIndex(FolderTree(vllm_root), "0.99.0")
    croot = write_tree(tmp_path / "client", client_files)
    return analyse_client(load_client(FolderTree(croot), "client"), api)


def vline(rel: str, needle: str, root: Path = MINIVLLM, nth: int = 1) -> int:
    """The line of `needle` in a fixture vLLM file: expected vLLM lines are read, never typed in."""
    return file_line(root, rel, needle, nth)


# ------------------------------------------------------------------ lines in real vLLM sources
def _class_or_func(tree, dotted: str):
    """The ClassDef/FunctionDef at `Outer.inner` (top level first, then members)."""
    import ast

    node = tree
    for part in dotted.split("."):
        node = next(n for n in node.body if isinstance(n, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == part)
    return node


def def_line(source: str, dotted: str) -> int:
    """Line of `def`/`class` DOTTED (e.g. "Scheduler.__init__") in SOURCE, found with ast."""
    import ast

    return _class_or_func(ast.parse(source), dotted).lineno


def param_line(source: str, func: str, param: str) -> int:
    import ast

    fn = _class_or_func(ast.parse(source), func)
    args = fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs
    return next(a.lineno for a in args if a.arg == param)


def field_line(source: str, cls: str, name: str) -> int:
    """Line of the annotated class-body field NAME of CLS."""
    import ast

    node = _class_or_func(ast.parse(source), cls)
    return next(s.lineno for s in node.body if isinstance(s, ast.AnnAssign) and getattr(s.target, "id", None) == name)


def defines_at(source: str, line: int) -> set[str]:
    """Names of the functions/classes whose `def`/`class` is on LINE of SOURCE."""
    import ast

    return {n.name for n in ast.walk(ast.parse(source))
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and n.lineno == line}


# ------------------------------------------------------------------ a result for the renderers
SAMPLE_CLIENT = {
    "pkg/__init__.py": "",
    "pkg/gen.py": """
        from vllm.v1.request import RequestState
        from vllm.utils import get_open_port
        from vllm.v1.core.sched.scheduler import Scheduler


        def build(c, k, m):
            return Scheduler(c, k, m)
    """,
    "pkg/patch.py": """
        import types

        import vllm


        def fwd(self, x):
            return self.get_input_embeddings(x)


        def install(model):
            model.forward = types.MethodType(fwd, model)
    """,
}


def sample_result(tmp_path: Path, client_files: dict[str, str] | None = None) -> ScanResult:
    """Errors (DC002, DC005), a warning (DC009), an unknown (DC008, no baseline) and one info
    finding added by hand (no generic probe emits info), against the miniature vLLM."""
    from driftcheck.rules.findings import Finding, Location

    result = scan_client(tmp_path, client_files or SAMPLE_CLIENT, only=["DC002", "DC005", "DC008", "DC009"])
    result.findings.append(Finding(
        rule="DC006", name="missing-attribute", severity="info", message="100% informative: a, b\nsecond line",
        symbol="vllm.x.Y.z", client=Location("pkg/gen.py", 7, "return Scheduler(c, k, m)", 12), vllm=None,
        client_name=result.clients[0].name))
    result.findings.sort(key=lambda f: f.sort_key())
    return result


SHAPES = Path(__file__).resolve().parent.parent / "fixtures" / "plugin_shapes"


def plugin_shape(prefix: str) -> tuple[dict[str, str], dict[str, str]]:
    """(fake vLLM files, client files) of the plugin shape whose folder starts with `prefix` + "_"."""
    root = next(SHAPES.glob(f"{prefix}_*"))

    def files(part: str) -> dict[str, str]:
        base = root / part
        return {str(p.relative_to(base)): p.read_text() for p in sorted(base.rglob("*")) if p.is_file()}

    return {k: v for k, v in files("vllm_src").items() if k.startswith("vllm/")}, files("client")


def edited(files: dict[str, str], rel: str, *edits: tuple[str, str]) -> dict[str, str]:
    """`files` with each (old, new) replaced in `rel` (each old must be there)."""
    text = files[rel]
    for old, new in edits:
        assert old in text, (rel, old)
        text = text.replace(old, new)
    return {**files, rel: text}


def scan_at_release(tmp_path: Path, files: dict[str, str], vllm: str = "0.16.0", only=None, client_vllm=None) -> ScanResult:
    """Scan small hand-written client files (dedented) against a real vLLM release, from the test cache."""
    from conftest import CACHE_DIR

    root = tmp_path / "client"
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"))
    return scan(resolve_vllm(vllm, CACHE_DIR), [resolve_client(str(root), CACHE_DIR)],
                ScanOptions(cache_dir=CACHE_DIR, only=only, client_vllm=client_vllm))
