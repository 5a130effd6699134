"""DC001 missing-module: an imported vLLM module that the target does not have."""

from __future__ import annotations

from scan.helpers import scan_client


def test_present_with_where_it_moved(tmp_path):
    # the old pre-v1 path: vllm/worker/ does not exist, vllm/v1/worker/gpu_worker.py does
    result = scan_client(tmp_path, {"c.py": "import os\nfrom vllm.worker.gpu_worker import Worker\n"}, only=["DC001"])
    [f] = result.findings
    assert (f.rule, f.name, f.severity, f.when) == ("DC001", "missing-module", "error", "import")
    assert (f.client.path, f.client.line, f.client.code) == ("c.py", 2, "from vllm.worker.gpu_worker import Worker")
    assert f.symbol == "vllm.worker.gpu_worker"
    assert f.details["moved_to"] == "vllm.v1.worker.gpu_worker" and f.fix == "move-import"
    assert f.vllm.path == "vllm/__init__.py"  # the nearest package that does exist


def test_present_without_a_same_named_module_has_no_fix(tmp_path):
    result = scan_client(tmp_path, {"c.py": "import vllm.v1.spec_decode.nothing_like_it\n"}, only=["DC001"])
    [f] = result.findings
    assert f.fix is None and "moved_to" not in f.details
    assert f.details["nearest_package"] == "vllm.v1"


def test_absent_for_existing_modules_and_packages(tmp_path):
    client = {"c.py": """
        import vllm
        import vllm.v1.request as req
        from vllm.v1.worker import gpu_worker
        from vllm.v1.core.sched.scheduler import Scheduler
        from vllm.config import SchedulerConfig
    """}
    assert scan_client(tmp_path, client, only=["DC001"]).findings == []


def _named_by_search(tree, module: str) -> str | None:
    """The per-name search DC001 made before the client's table: the first file, then line, holding "m" or 'm'."""
    needle = [f'"{module}"', f"'{module}'"]
    for rel in tree.iter_files(""):
        text = tree.read_text(rel)
        if module not in text:
            continue
        for i, line in enumerate(text.splitlines(), 1):
            if any(n in line for n in needle):
                return f"{rel}:{i}"
    return None


def test_quoted_names_table_equals_a_search_per_name_on_a_release():
    import re

    from conftest import vllm_sources
    from driftcheck.client_model.client import ClientSource
    from driftcheck.sources.sources import ZipTree

    tree = ZipTree(vllm_sources("0.16.0"))
    table = ClientSource(tree, [], "vllm").quoted_names()
    dotted = sorted({m for rel in tree.iter_files("vllm/v1") for m in re.findall(r"vllm(?:\.\w+)+", tree.read_text(rel))})
    asked = [*dotted[::6], "vllm._C", "vllm.nothing_here", "torch", "cuda", "__main__", "x"]
    assert len(dotted) > 200  # a sixth of them, spread over the alphabet, is asked below
    found = 0
    for name in asked:
        assert table.get(name) == _named_by_search(tree, name), name
        found += table.get(name) is not None
    assert found > 5  # names the release spells as strings (the table is not empty by mistake)


def test_quoted_names_on_awkward_texts(tmp_path):
    from driftcheck.client_model.client import ClientSource
    from driftcheck.sources.sources import FolderTree

    files = {
        "a.py": 'x = "vllm.a"b"vllm.b"\ny = f"vllm.c" + """vllm.d"""\n',  # adjacent literals share a quote
        "b/c.py": "s = 'vllm.a'\nt = \"vllm.e' \nu = 'vllm.f.'\n",  # a mixed pair is no literal; a trailing dot is a name
        "d.py": "p = 1\r\nq = 'vllm.g'\x0cr = 'vllm.h'\u2028s = \"vllm.i\"\n",  # line breaks only splitlines sees
        "e.py": "'1vllm' 'vllm-x' '  vllm.j' 'élan.k'\n",
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, encoding="utf-8", newline="")
    tree = FolderTree(tmp_path)
    table = ClientSource(tree, [], "t").quoted_names()
    for name in ("vllm.a", "vllm.b", "vllm.c", "vllm.d", "vllm.e", "vllm.f.", "vllm.g", "vllm.h", "vllm.i", "vllm.j",
                 "élan.k", "b"):  # DC001 asks for module names only: dotted identifiers
        assert table.get(name) == _named_by_search(tree, name), name
    assert table["vllm.a"] == "a.py:1" and table["vllm.h"] == "d.py:3" and table["vllm.i"] == "d.py:4"


# 28b's open message: unified-cache-management's `ucm_connector.py:876` imports a module under try/except ImportError
# whose handler raises its own ImportError. That handler is no fallback: the warning must not say one runs.
REFUSING = ("try:\n    from vllm.v1.worker.nothing_like_it import Thing\nexcept ImportError:\n"
            "    raise ImportError('this plugin needs a vLLM with nothing_like_it')\n")


def test_an_import_whose_every_handler_raises_again_is_an_error(tmp_path):
    # no fallback: the module fails to import on this vLLM all the same, with the client's own message (22b's S1:
    # lm-format-enforcer's `except ImportError: raise ImportError("vllm is not installed")` at vLLM 0.26.0)
    [f] = scan_client(tmp_path, {"c.py": REFUSING}, only=["DC001"]).findings
    assert f.severity == "error"
    assert "catches the ImportError only to raise an error of the client's own" in f.message
    assert "fallback path runs" not in f.message


def test_twin_in_a_function_a_raising_handler_is_a_precondition_the_client_checks(tmp_path):
    code = "def load():\n" + "".join("    " + line + "\n" for line in REFUSING.splitlines()) + "    return Thing\n"
    [f] = scan_client(tmp_path, {"c.py": code}, only=["DC001"]).findings
    assert f.severity == "warning" and "handler raises an error of the client's own" in f.message


def test_twin_a_handler_that_may_return_before_its_raise_is_a_guard(tmp_path):
    code = ("def load(strict):\n    try:\n        from vllm.v1.worker.nothing_like_it import Thing\n"
            "    except ImportError:\n        if not strict:\n            return None\n        raise\n    return Thing\n")
    [f] = scan_client(tmp_path, {"c.py": code}, only=["DC001"]).findings
    assert f.severity == "warning" and "fallback path runs" in f.message


def test_a_guarded_import_whose_handler_falls_back_says_so(tmp_path):
    code = REFUSING.replace("    raise ImportError('this plugin needs a vLLM with nothing_like_it')\n", "    Thing = None\n")
    [f] = scan_client(tmp_path, {"c.py": code}, only=["DC001"]).findings
    assert f.severity == "warning" and "fallback path runs" in f.message and "raises" not in f.message


def test_a_raising_inner_try_inside_a_falling_back_outer_one_says_the_fallback_runs(tmp_path):
    # the inner handler's raise is caught by the outer try, whose handler falls back
    code = ("try:\n" + "".join("    " + line + "\n" for line in REFUSING.splitlines())
            + "except ImportError:\n    Thing = None\n")
    [f] = scan_client(tmp_path, {"c.py": code}, only=["DC001"]).findings
    assert f.severity == "warning" and "fallback path runs" in f.message
