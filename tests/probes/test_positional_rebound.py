"""DC121 positional-rebound: a positional argument of a vLLM call binds another parameter than in the client's vLLM.

Shapes from three clients (batch 20e's W1 and the checks of the rule on other plugins, sixteenth session):
- lmcache 0.3.9's `get_rope(head_size, rotary_dim, max_position, base, is_neox_style, rope_scaling, dtype,
  partial_rotary_factor)`: vLLM 0.12.0 dropped `base` and appended `dual_chunk_attention_config` (same count);
- vllm-ascend 0.11.0's `LinearBase(input_size, output_size, skip_bias_add, ...)`: 0.23.0 inserted `bias`;
- vllm-ascend 0.11.0's `Scheduler(vllm_config, kv_cache_config, structured_output_manager, mm_registry, ...)`:
  0.23.0 inserted `block_size` and `hash_block_size` before `mm_registry`.
"""

from __future__ import annotations

from conftest import run_cli
from scan.helpers import scan_trees, vllm_tree, write_tree

_OLD_ROPE = ("def get_rope(head_size, rotary_dim, max_position, base, is_neox_style=True,\n"
             "             rope_scaling=None, dtype=None, partial_rotary_factor=1.0):\n    return head_size\n")
_NEW_ROPE = ("def get_rope(head_size, rotary_dim, max_position, is_neox_style=True,\n"
             "             rope_parameters=None, dtype=None, partial_rotary_factor=1.0,\n"
             "             dual_chunk_attention_config=None):\n    return rope_parameters.items()\n")
_OLD_LINEAR = ("class LinearBase:\n    def __init__(self, input_size, output_size, skip_bias_add=False, params_dtype=None,\n"
               "                 quant_config=None, prefix=''):\n        self.input_size = input_size\n")
_NEW_LINEAR = ("class LinearBase:\n    def __init__(self, input_size, output_size, bias=False, skip_bias_add=False,\n"
               "                 params_dtype=None, quant_config=None, prefix=''):\n        self.input_size = input_size\n")
_RENAMED_ROPE = ("def get_rope(head_size, rotary_dim, max_position, rope_theta, is_neox_style=True,\n"
                 "             rope_scaling=None, dtype=None, partial_rotary_factor=1.0):\n    return head_size\n")


def _release(rope: str, linear: str) -> dict[str, str]:
    return {"vllm/__init__.py": "", "vllm/layers/__init__.py": "", "vllm/layers/rope.py": rope,
            "vllm/layers/linear.py": linear}


_CLIENT = '''from vllm.layers.linear import LinearBase
from vllm.layers.rope import get_rope


def make(head_size, rotary_dim, max_position, base, is_neox_style=True, rope_scaling=None, dtype=None):
    return get_rope(head_size, rotary_dim, max_position, base, is_neox_style, rope_scaling, dtype, 1.0)


class Gate(LinearBase):
    def __init__(self, hidden, experts):
        super().__init__(hidden, experts, False, None, None, "gate")


def build(hidden, experts):
    return LinearBase(hidden, experts, False, None)
'''


def _scan(tmp_path, old: dict, new: dict, client: str = _CLIENT, with_own: bool = True):
    own = vllm_tree(tmp_path / "own", old)
    write_tree(own, {"vllm/_version.py": '__version__ = "0.11.2"\n'})
    result = scan_trees(tmp_path, new, {"pkg/__init__.py": "", "pkg/m.py": client}, only=["DC121"],
                        client_vllm=str(own) if with_own else None, version="0.12.0")
    assert not result.internal_errors
    return sorted((f.client.line, f.severity, f.details["position"], f.details["meant"], f.details["binds"], f.message)
                  for f in result.findings)


def test_a_removed_parameter_shifts_the_positional_arguments_after_it(tmp_path):
    found = _scan(tmp_path, _release(_OLD_ROPE, _OLD_LINEAR), _release(_NEW_ROPE, _OLD_LINEAR))
    assert [(line, severity, position, meant, binds) for line, severity, position, meant, binds, _m in found] == [
        (6, "warning", 4, "base", "is_neox_style")]
    message = found[0][5]
    assert message.startswith("get_rope()'s 4th positional argument bound `base` in vLLM 0.11.2 and binds "
                              "`is_neox_style` in vLLM 0.12.0 (and the 4 after it, each into another's place)")
    assert "pass them by keyword" in message


def test_an_inserted_parameter_shifts_a_constructor_and_a_base_init(tmp_path):
    found = _scan(tmp_path, _release(_OLD_ROPE, _OLD_LINEAR), _release(_OLD_ROPE, _NEW_LINEAR))
    assert [(line, position, meant, binds) for line, _s, position, meant, binds, _m in found] == [
        (11, 3, "skip_bias_add", "bias"), (15, 3, "skip_bias_add", "bias")]


def test_twin_a_parameter_renamed_in_place_binds_the_same_value(tmp_path):
    assert _scan(tmp_path, _release(_OLD_ROPE, _OLD_LINEAR), _release(_RENAMED_ROPE, _OLD_LINEAR)) == []


def test_twin_keywords_bind_by_name(tmp_path):
    client = ("from vllm.layers.rope import get_rope\n\n\ndef make(h, r, m, b):\n"
              "    return get_rope(h, r, m, base=b, is_neox_style=True)\n")
    assert _scan(tmp_path, _release(_OLD_ROPE, _OLD_LINEAR), _release(_NEW_ROPE, _OLD_LINEAR), client) == []


def test_twin_arguments_before_the_change_keep_their_parameters(tmp_path):
    client = "from vllm.layers.rope import get_rope\n\n\ndef make(h, r, m):\n    return get_rope(h, r, m)\n"
    assert _scan(tmp_path, _release(_OLD_ROPE, _OLD_LINEAR), _release(_NEW_ROPE, _OLD_LINEAR), client) == []


def test_twin_without_the_clients_own_vllm_nothing_is_compared(tmp_path):
    assert _scan(tmp_path, _release(_OLD_ROPE, _OLD_LINEAR), _release(_NEW_ROPE, _NEW_LINEAR), with_own=False) == []


def test_twin_a_call_the_target_rejects_is_left_to_the_call_rules(tmp_path):
    # one argument too many at the target: DC004's TypeError, not a shift
    fewer = _NEW_ROPE.replace(",\n             dual_chunk_attention_config=None", "")
    assert _scan(tmp_path, _release(_OLD_ROPE, _OLD_LINEAR), _release(fewer, _OLD_LINEAR)) == []


def test_the_rule_is_listed_and_documented():
    proc = run_cli("rules", "DC121")
    assert proc.returncode == 0 and "positional-rebound" in proc.stdout and "get_rope" in proc.stdout
    assert "DC121" in run_cli("rules").stdout


def test_on_real_releases(tmp_path):
    """vllm-ascend 0.11.0's calls (core/scheduler.py:49, torchair_pangu_moe.py:103) at vLLM 0.23.0 against its 0.11.0:
    `Scheduler` got `block_size` and `hash_block_size` before `mm_registry`, `LinearBase` got `bias` before
    `skip_bias_add`; the same client at 0.11.0 itself has nothing to compare."""
    from conftest import CACHE_DIR
    from driftcheck.scan.pipeline import ScanOptions, scan
    from driftcheck.sources.targets import resolve_client, resolve_vllm

    root = tmp_path / "client" / "plug"
    root.mkdir(parents=True)
    (root / "__init__.py").write_text(
        "from vllm.model_executor.layers.linear import LinearBase\nfrom vllm.v1.core.sched.scheduler import Scheduler\n\n\n"
        "def build(vllm_config, kv_cache_config, structured_output_manager, mm_registry):\n"
        "    return Scheduler(vllm_config, kv_cache_config, structured_output_manager, mm_registry, False, True)\n\n\n"
        "def gate(hidden, experts, quant_config):\n    return LinearBase(hidden, experts, False, None, quant_config)\n")

    def found(version):
        result = scan(resolve_vllm(version, CACHE_DIR), [resolve_client(str(root.parent), CACHE_DIR)],
                      ScanOptions(cache_dir=CACHE_DIR, only=["DC121"], client_vllm="0.11.0"))
        assert not result.internal_errors
        return sorted((f.client.line, f.details["meant"], f.details["binds"]) for f in result.findings)

    assert found("0.23.0") == [(6, "mm_registry", "block_size"), (10, "skip_bias_add", "bias")]
    assert found("0.11.0") == []
