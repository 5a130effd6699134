"""A vLLM module loaded by its whole name through `importlib.import_module` (ContextPilot reaches `BlockPool` this way,
batch 18b's gap) is checked as `import vllm.x as m` is: a missing module attribute or method is an error, and the
guards that hold for an import hold for it. A relative name, a `package=` argument, or a module the client ships
itself gives nothing to check (driftcheck cannot tell which module loads)."""

from __future__ import annotations

from scan.helpers import scan_trees

VLLM = {
    "vllm/__init__.py": "",
    "vllm/v1/__init__.py": "",
    "vllm/v1/core/__init__.py": "",
    "vllm/v1/core/block_pool.py": "class BlockPool:\n    def __init__(self, n):\n        self.n = n\n\n"
                                  "    def get_new_blocks(self, k):\n        return []\n",
}

CLIENT = '''import importlib
from importlib import import_module

import vllm

pool_module = importlib.import_module("vllm.v1.core.block_pool")
top = pool_module.top_missing


def inside():
    m = import_module("vllm.v1.core.block_pool")
    return m.BlockPool(1).get_new_blocks(2), m.BlockPool(1).gone_method()


def relative():
    m = importlib.import_module(".block_pool", "vllm.v1.core")
    return m.not_checked


def guarded():
    m = importlib.import_module("vllm.v1.core.block_pool")
    try:
        return m.maybe_there
    except AttributeError:
        return None
'''


def _findings(result) -> list[tuple[str, int, str]]:
    return sorted((f.rule, f.client.line, f.severity) for f in result.findings)


def test_a_module_loaded_by_name_is_checked_like_an_import(tmp_path):
    result = scan_trees(tmp_path, VLLM, {"pkg/__init__.py": "", "pkg/load.py": CLIENT})
    assert _findings(result) == [("DC002", 7, "error"), ("DC002", 23, "warning"), ("DC006", 12, "error")]


def test_a_name_vllm_lacks_is_a_missing_module_and_the_clients_own_gives_nothing(tmp_path):
    # the load of a module the release lacks fails as its `import` does (29e M1); nothing is read off what it would bind
    client = ('import importlib\n\nimport vllm\n\n'
              'a = importlib.import_module("vllm.v1.core.gone")\nb = a.anything\n'
              'c = importlib.import_module("pkg.helpers")\nd = c.anything\n')
    result = scan_trees(tmp_path, VLLM, {"pkg/__init__.py": "", "pkg/helpers.py": "x = 1\n", "pkg/load.py": client})
    assert _findings(result) == [("DC001", 5, "error")]


def test_a_file_that_only_loads_vllm_by_name_is_read(tmp_path):
    """ContextPilot's `_vllm_hook.py`: no `import vllm` at all, `import importlib` and `import importlib.abc`, the load
    in a `try` whose handler re-raises: the file is one of the client's vLLM files, and its reads are checked."""
    hook = ('import importlib\nimport importlib.abc\n\n\n'
            'def install():\n'
            '    try:\n'
            '        module = importlib.import_module("vllm.v1.core.block_pool")\n'
            '    except ImportError as e:\n'
            '        raise ImportError("no vLLM") from e\n'
            '    return module.BlockPool, module.gone_helper\n')
    result = scan_trees(tmp_path, VLLM, {"pkg/__init__.py": "", "pkg/hook.py": hook})
    assert _findings(result) == [("DC002", 10, "error")]
    assert result.stats["uses_checked"] == 3  # the load itself (an import of the module by its name) and two reads
