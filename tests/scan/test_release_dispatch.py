"""Per-release copies loaded only under a test that names releases (cross_file_guards.dispatched_modules): the `case`
of a `match` on the version (CP, uc-manager-cuda-cu129 0.8.1) and comparisons with names bound to one release
(CO, trinity-rft 0.6.0: `v == V0120`, `V0120 < v < V0170`), a range spelled as two bounds and loaded by a package
`__init__` that imports no vLLM (DY, rlinf 0.3.0: `v >= parse("0.8.5") and v < parse("0.9.0")`). A finding in such a
copy is a warning at most; an import that runs on every newer release (`V0170 <= v`, `case _:`, one bound alone) stays
checked."""

from __future__ import annotations

from scan.helpers import scan_trees

VLLM = {"vllm/__init__.py": "__version__ = '0.99.0'\n", "vllm/core.py": "def present():\n    return 1\n"}
COPY = "from vllm.core import gone\n"  # the copy for an old release imports a name this vLLM lacks


def _severities(result) -> dict[str, str]:
    return {f.client.path: f.severity for f in result.findings if f.rule == "DC001" or f.rule == "DC002"}


def _match(default_imports_copy: bool) -> dict[str, str]:
    default = "import pkg.old.copy" if default_imports_copy else "pass"
    return {"pkg/__init__.py": "", "pkg/old/__init__.py": "", "pkg/old/copy.py": COPY, "pkg/apply.py": f"""
        import vllm

        def apply():
            version = vllm.__version__.split("+")[0]
            match version:
                case "0.11.0" | "0.11.1":
                    import pkg.old.copy
                case _:
                    {default}
    """}


def test_cp_a_case_naming_releases_dispatches_its_copy(tmp_path):
    assert _severities(scan_trees(tmp_path, VLLM, _match(False))) == {"pkg/old/copy.py": "warning"}


def test_cp_a_wildcard_case_loads_the_copy_everywhere(tmp_path):
    assert _severities(scan_trees(tmp_path, VLLM, _match(True))) == {"pkg/old/copy.py": "error"}


def _constants(test: str) -> dict[str, str]:
    return {"pkg/__init__.py": "", "pkg/v12.py": COPY, "pkg/select.py": f"""
        import vllm
        from packaging.version import parse as parse_version

        V0120 = parse_version("0.12.0")
        V0170 = parse_version("0.17.0")

        def runner():
            vllm_version = parse_version(vllm.__version__)
            if {test}:
                from pkg.v12 import gone
                return gone
            return None
    """}


def test_co_equal_to_a_release_constant_dispatches(tmp_path):
    assert _severities(scan_trees(tmp_path, VLLM, _constants("vllm_version == V0120"))) == {"pkg/v12.py": "warning"}


def test_co_between_two_release_constants_dispatches(tmp_path):
    assert _severities(scan_trees(tmp_path, VLLM, _constants("V0120 < vllm_version < V0170"))) == {"pkg/v12.py": "warning"}


def test_co_at_or_after_a_release_loads_on_every_newer_one(tmp_path):
    assert _severities(scan_trees(tmp_path, VLLM, _constants("V0170 <= vllm_version"))) == {"pkg/v12.py": "error"}


def _through_a_file_without_vllm(unguarded_elsewhere: bool) -> dict[str, str]:
    """ucm's shape: the branch imports a patch module that imports no vLLM itself, which imports the copies."""
    files = {"pkg/__init__.py": "", "pkg/old/__init__.py": "", "pkg/old/copy.py": COPY,
             "pkg/old/patch.py": "from pkg.old import copy\n\nNAME = copy.__name__\n",
             "pkg/apply.py": """
        import vllm

        def apply():
            match vllm.__version__:
                case "0.11.0":
                    import pkg.old.patch
                case _:
                    pass
    """}
    if unguarded_elsewhere:  # a file without vLLM that loads the copy on every release
        files["pkg/tools.py"] = "import pkg.old.copy\n"
    return files


def test_a_copy_reached_through_a_file_that_imports_no_vllm_is_dispatched(tmp_path):
    assert _severities(scan_trees(tmp_path, VLLM, _through_a_file_without_vllm(False))) == {"pkg/old/copy.py": "warning"}


def test_a_file_without_vllm_that_loads_the_copy_unguarded_keeps_it_checked(tmp_path):
    assert _severities(scan_trees(tmp_path, VLLM, _through_a_file_without_vllm(True))) == {"pkg/old/copy.py": "error"}


def _package_init(test: str) -> dict[str, str]:
    """rlinf's shape: the package `__init__` (no vLLM in it) imports the copy for a range of releases, refuses others."""
    return {"pkg/__init__.py": "", "pkg/v085/__init__.py": "", "pkg/v085/executor.py": COPY, "pkg/workers/__init__.py": f"""
        from importlib.metadata import version
        from packaging.version import parse

        package_version = parse(version("vllm"))
        if {test}:
            from pkg.v085.executor import gone
        else:
            raise ValueError(f"vllm {{package_version}} not supported")
    """}


def test_dy_a_range_of_two_bounds_in_a_file_without_vllm_dispatches(tmp_path):
    test = 'package_version >= parse("0.8.5") and package_version < parse("0.9.0")'
    assert _severities(scan_trees(tmp_path, VLLM, _package_init(test))) == {"pkg/v085/executor.py": "warning"}
    test = 'parse("0.9.0") > package_version and package_version >= parse("0.8.5")'  # either side, either order
    assert _severities(scan_trees(tmp_path, VLLM, _package_init(test))) == {"pkg/v085/executor.py": "warning"}


def test_dy_one_bound_or_bounds_of_two_things_load_the_copy_on_newer_releases(tmp_path):
    for test in ('package_version >= parse("0.8.5")',
                 'package_version >= parse("0.8.5") and other_version < parse("0.9.0")'):
        assert _severities(scan_trees(tmp_path, VLLM, _package_init(test))) == {"pkg/v085/executor.py": "error"}, test
