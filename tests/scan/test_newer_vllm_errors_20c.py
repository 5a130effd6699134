"""Causes found by batch 20c (clients scanned against a NEWER vLLM than they were written for, vLLM 0.33.0;
docs/triage/2026-12-04-newer-vllm-errors-20c.md).

TA: DC001's "A module of that name is at X" (and the `move-import` fix it enables) named a module of the same last
name that lacks what the import takes: lmcache 0.5.6's `from vllm.attention import Attention` was sent to
`vllm.config.attention` (AttentionConfig's module; `Attention` is in `vllm.model_executor.layers.attention
.attention`), vllm-ascend 0.23.0's `from vllm.v1.kv_offload.abstract import LoadStoreSpec, OffloadingManager` to
`vllm.v1.executor.abstract`, and `import vllm.model_executor.layers.fla.ops` (then `...fla.ops.layernorm_guard...`)
to `vllm.model_executor.layers.mamba.ops`. A same-named module is now suggested only when it gives every name the
import takes (`from M import a, b`), or, for `import M`, every name the file reads through `M.` (`M.a.b` -> `a`).
The finding stays an error either way; only its suggestion changes.
"""

from __future__ import annotations

from scan.helpers import scan_trees

VLLM = {
    "vllm/__init__.py": "",
    "vllm/config/__init__.py": "",
    "vllm/config/attention.py": "class AttentionConfig:\n    pass\n",
    "vllm/layers/__init__.py": "",
    "vllm/layers/attention/__init__.py": "",
    "vllm/layers/attention/layer.py": "class Attention:\n    pass\n",
    "vllm/mamba/__init__.py": "",
    "vllm/mamba/ops/__init__.py": "",
    "vllm/mamba/ops/causal_conv1d.py": "def causal_conv1d_update():\n    pass\n",
    "vllm/third_party/__init__.py": "",
    "vllm/third_party/fla/__init__.py": "",
    "vllm/third_party/fla/ops/__init__.py": "from .chunk import chunk_gated_delta_rule\n",
    "vllm/third_party/fla/ops/chunk.py": "def chunk_gated_delta_rule():\n    pass\n",
    "vllm/third_party/fla/ops/layernorm_guard.py": "class LayerNormFn:\n    pass\n",
}


def _dc001(tmp_path, code: str) -> list:
    client = {"plugin/__init__.py": "", "plugin/mod.py": code}
    return [f for f in scan_trees(tmp_path, VLLM, client).findings if f.rule == "DC001"]


def test_ta_same_named_module_without_the_name_is_not_suggested(tmp_path):
    (f,) = _dc001(tmp_path, "from vllm.attention import Attention\n")
    assert f.severity == "error"
    assert "vllm.config.attention" not in f.message
    # `move-import` starts from the closest module of that name but moves each name only where it is (20b's SB):
    # `Attention` goes to the module that defines it, never to `vllm.config.attention`
    from driftcheck.fix.fixer import FixOptions, plan_fixes
    from driftcheck.scan.pipeline import ScanOptions
    from driftcheck.sources.targets import resolve_client, resolve_vllm

    plan = plan_fixes(resolve_vllm(str(tmp_path / "vllm-src"), tmp_path / "cache"),
                      resolve_client(str(tmp_path / "client"), tmp_path / "cache"),
                      ScanOptions(cache_dir=tmp_path / "cache", use_cache=False), FixOptions(only=["move-import"]))
    [change] = plan.changes
    assert change.new == "from vllm.layers.attention.layer import Attention\n"


def test_ta_twin_same_named_module_with_the_name_is_still_suggested(tmp_path):
    (f,) = _dc001(tmp_path, "from vllm.attention.layer import Attention\n")
    assert f.severity == "error"
    assert "A module of that name is at `vllm.layers.attention.layer`" in f.message


def test_ta_plain_import_suggests_the_module_that_has_what_the_file_reads(tmp_path):
    code = ("import vllm.old.fla.ops\n\n"
            "vllm.old.fla.ops.layernorm_guard.LayerNormFn = object\n"
            "vllm.old.fla.ops.chunk_gated_delta_rule = None\n")
    (f,) = _dc001(tmp_path, code)
    assert f.severity == "error"
    assert "A module of that name is at `vllm.third_party.fla.ops`" in f.message


def test_ta_twin_plain_import_of_a_module_nothing_replaces_stays_an_error_without_suggestion(tmp_path):
    (f,) = _dc001(tmp_path, "import vllm.old.fla.ops\n\nvllm.old.fla.ops.fused_recurrent.kernel = None\n")
    assert f.severity == "error"
    assert "A module of that name" not in f.message


# ----------------------------------------------------------------------------------------- TC
# vllm-ascend 0.23.0 @ 0.33.0: core/scheduler_profiling_chunk.py:363 reads `self._disable_preemption` in
# `ProfilingChunkScheduler(Scheduler)`; vLLM's Scheduler never sets it, but patch/platform/patch_balance_schedule.py:745
# replaces `vllm.v1.core.sched.scheduler.Scheduler` with its `BalanceScheduler`, whose `__init__` sets it (line 79),
# and the profiling scheduler is loaded by a dotted string after the platform patches ran. Which import comes first
# cannot be known, so the read is unknown, not an error (shape TC_ in tests/fixtures/plugin_shapes).

SCHED = {"vllm/__init__.py": "", "vllm/sched.py": "class Scheduler:\n    def __init__(self):\n        self.waiting = []\n"}
BALANCE = '''
import vllm.sched
from vllm.sched import Scheduler


class BalanceScheduler(Scheduler):
    def __init__(self):
        super().__init__()
        self._disable_preemption = False


vllm.sched.Scheduler = BalanceScheduler
'''


def _chunk(tmp_path, attr: str, base: str = "Scheduler", replace: bool = True) -> list:
    chunk = (f"from vllm.sched import Scheduler\n\n\nclass ChunkScheduler({base}):\n"
             f"    def schedule(self):\n        return self.{attr}\n")
    balance = BALANCE if replace else BALANCE.replace("vllm.sched.Scheduler = BalanceScheduler", "")
    client = {"plugin/__init__.py": "", "plugin/balance.py": balance, "plugin/chunk.py": chunk}
    return [f for f in scan_trees(tmp_path, SCHED, client).findings
            if f.rule == "DC006" and f.client.path == "plugin/chunk.py"]


def _unknowns(tmp_path, attr: str) -> list:
    chunk = (f"from vllm.sched import Scheduler\n\n\nclass ChunkScheduler(Scheduler):\n"
             f"    def schedule(self):\n        return self.{attr}\n")
    client = {"plugin/__init__.py": "", "plugin/balance.py": BALANCE, "plugin/chunk.py": chunk}
    return [u for u in scan_trees(tmp_path, SCHED, client).unknown if u.client.path == "plugin/chunk.py"]


def test_tc_member_the_replacement_sets_is_unknown(tmp_path):
    assert _chunk(tmp_path, "_disable_preemption") == []
    (u,) = _unknowns(tmp_path, "_disable_preemption")
    assert "replaces `vllm.sched.Scheduler` with its own `BalanceScheduler`" in u.message


def test_tc_twin_member_no_one_sets_stays_an_error(tmp_path):
    (f,) = _chunk(tmp_path, "_skipped_waiting")
    assert f.severity == "error"


def test_tc_twin_without_the_module_replacement_stays_an_error(tmp_path):
    (f,) = _chunk(tmp_path, "_disable_preemption", replace=False)
    assert f.severity == "error"


# ----------------------------------------------------------------------------------------- TD
# trinity-rft 0.6.0 @ 0.33.0: vllm_patch/api_patch.py:118 reads `self.tool_parser` in a method set on
# `OpenAIServingChat`; the one vLLM class that had it in 0.23.0 lost it in 0.33.0 and gained a dozen members, and DC008
# said "They define 'chat_completion_stream_generator_raw' instead (renamed)" - or '_engine_reasoning_kwargs', by the
# set's order. A rename is claimed only when one gained member is ahead of every other.

def _dc008(tmp_path, gained: list[str]) -> list:
    from scan.helpers import vllm_tree

    old = vllm_tree(tmp_path / "old", {"vllm/__init__.py": "", "vllm/_version.py": '__version__ = "0.23.0"\n',
                                       "vllm/serving.py": "class Serving:\n    def __init__(self):\n"
                                                          "        self.tool_parser = None\n        self.keep = 1\n"})
    body = "".join(f"        self.{name} = None\n" for name in gained)
    files = {"vllm/__init__.py": "", "vllm/serving.py": f"class Serving:\n    def __init__(self):\n        self.keep = 1\n{body}"}
    client = {"plugin/__init__.py": "",
              # bound to an object of no known class (DC008's ground; one assigned onto `Serving` is typed: DC006)
              "plugin/patch.py": "import types\n\nimport vllm.serving\n\n\ndef _gen(self):\n    return self.tool_parser\n\n\n"
                                 "def install(server):\n    server.gen = types.MethodType(_gen, server)\n"}
    result = scan_trees(tmp_path, files, client, client_vllm=str(old))
    return [f for f in result.findings if f.rule == "DC008"]


def test_td_one_class_that_gained_several_members_names_no_rename(tmp_path):
    (f,) = _dc008(tmp_path, ["parser_a", "parser_b", "parser_c"])
    assert f.severity == "error"
    assert "renamed" not in f.message and not f.fix


def test_td_twin_one_gained_member_is_still_named(tmp_path):
    (f,) = _dc008(tmp_path, ["tool_parser_cls"])
    assert f.severity == "error"
    assert "They define 'tool_parser_cls' instead (renamed)." in f.message


# ----------------------------------------------------------------------------------------- TE
# vllm-ascend 0.23.0 @ 0.33.0: patch/worker/patch_triton.py:15 and patch_idex_310.py:14 store onto
# `vllm.model_executor.layers.fla.ops....` at the top level of a patch module; `vllm.model_executor.layers.fla` is gone,
# and DC002 said "AttributeError when this line runs" (`when: call`), as for a use inside a function. A module-level
# line runs when its module is imported.

def _dc002(tmp_path, code: str) -> list:
    client = {"plugin/__init__.py": "", "plugin/patch.py": code}
    vllm = {"vllm/__init__.py": "", "vllm/layers/__init__.py": ""}
    return [f for f in scan_trees(tmp_path, vllm, client).findings if f.rule == "DC002"]


def test_te_module_level_read_of_a_missing_attribute_fails_at_import_time(tmp_path):
    (f,) = _dc002(tmp_path, "import vllm.layers\n\nvllm.layers.fla.kernel = None\n")
    assert f.severity == "error" and f.when == "import"
    assert f.message.endswith("AttributeError at import time.")


def test_te_twin_inside_a_function_still_fails_when_the_line_runs(tmp_path):
    (f,) = _dc002(tmp_path, "import vllm.layers\n\n\ndef patch():\n    vllm.layers.fla.kernel = None\n")
    assert f.severity == "error" and f.when == "call"
    assert f.message.endswith("AttributeError when this line runs.")
