"""replay-layer-arguments (DC106) on speculators 0.3.0's custom_worker.py against real vLLM releases.

Fixtures: before.py is the released file, after.py what the fix makes of it for vLLM 0.16.0 (the
seed's pair), after-0.32.0.py for 0.32.0, guard_after.py the `--guard` form (written against 0.16.0).
Then the patched replay itself is run, with stand-ins for vLLM's objects built from the target's own
sources: for each architecture family the replay covers (Llama, DeepSeek V2/V3, Qwen 2 / Qwen 3 MoE, Mixtral), a model whose class `forward` is
vLLM's (module and qualname) and whose layers have the signature of that release's decoder layer
`forward`; the layers must receive exactly the arguments vLLM's own model forward passes them.
"""

from __future__ import annotations

import ast
import builtins
import inspect
import itertools
import json
import shutil
import zipfile
from types import SimpleNamespace

import pytest

from codemods.fixture_util import FIXTURES, fixture, run_fix
from conftest import CACHE_DIR, client_sources, run_cli

FIX_ID = "replay-layer-arguments"
WORKER = "speculators/data_generation/custom_worker.py"
VERSIONS = ("0.16.0", "0.32.0")
AFTER = {"0.16.0": "after.py", "0.32.0": "after-0.32.0.py"}
# (file, model class) as vLLM names them; the layer class is what the model's own forward calls
FAMILIES = [
    ("vllm/model_executor/models/llama.py", "LlamaModel"),
    ("vllm/model_executor/models/deepseek_v2.py", "DeepseekV2Model"),  # DeepseekV2/V3ForCausalLM, Kimi K2
    ("vllm/model_executor/models/qwen2.py", "Qwen2Model"),  # Qwen2, and Qwen3 (Qwen3Model inherits forward)
    ("vllm/model_executor/models/qwen3_moe.py", "Qwen3MoeModel"),
    ("vllm/model_executor/models/mixtral.py", "MixtralModel"),
]


@pytest.mark.parametrize("version", VERSIONS)
def test_before_becomes_after(tmp_path, version):
    before, after = fixture(FIX_ID, "before.py"), fixture(FIX_ID, AFTER[version])
    assert before != after
    assert run_fix(tmp_path, before, FIX_ID, version) == after


@pytest.mark.parametrize("version", VERSIONS)
def test_after_is_a_no_op(tmp_path, version):
    after = fixture(FIX_ID, AFTER[version])
    assert run_fix(tmp_path, after, FIX_ID, version) == after
    assert run_fix(tmp_path, after, FIX_ID, version, guard=True) == after


def test_guard_form(tmp_path):
    guarded = fixture(FIX_ID, "guard_after.py")
    assert run_fix(tmp_path, fixture(FIX_ID, "before.py"), FIX_ID, "0.16.0", guard=True) == guarded
    assert run_fix(tmp_path, guarded, FIX_ID, "0.16.0", guard=True) == guarded
    assert run_fix(tmp_path, guarded, FIX_ID, "0.32.0", guard=True) == guarded  # one client, both releases


def test_outputs_parse_and_keep_every_other_line():
    before = fixture(FIX_ID, "before.py").splitlines()
    for p in sorted((FIXTURES / FIX_ID).glob("*after*.py")):
        text = p.read_text()
        compile(text, str(p), "exec")
        # only insertions, plus the one layer-call line that gains `**layer_kwargs`
        changed = [ln for ln in before if ln not in text.splitlines()]
        assert changed == ["            hidden_states=hidden_states, positions=positions, residual=residual"], p.name


def test_values_are_read_from_the_target_not_from_a_table():
    """The copied statements are vLLM's own text at the line DC106 names, in each release."""
    from conftest import source_line, vllm_sources

    for version in VERSIONS:
        after = fixture(FIX_ID, AFTER[version])
        line = source_line(vllm_sources(version), "vllm/model_executor/models/deepseek_v2.py", "hidden_states, residual = layer(")
        assert f"deepseek_v2.py:{line})" in after
        with zipfile.ZipFile(vllm_sources(version)) as z:
            vllm_text = z.read("vllm/model_executor/models/deepseek_v2.py").decode()
        start = vllm_text.index('llama_4_scaling_config = getattr(self.config, "llama_4_scaling", None)')
        block = [ln.strip() for ln in vllm_text[start:vllm_text.index("llama_4_scaling = None", start) + 22].splitlines()]
        block = [ln for ln in block if not ln.startswith("llama_4_scaling:")]  # a bare annotation: left out
        lines = [ln.strip() for ln in after.splitlines()]
        i = lines.index(block[0])
        assert lines[i:i + len(block)] == block


# ------------------------------------------------------------------ the patched replay, run
def _target(version):
    from driftcheck.vllm_model import bodies
    from driftcheck.vllm_model.api_index import ApiIndex
    from driftcheck.sources.targets import resolve_vllm

    t = resolve_vllm(version, CACHE_DIR)
    api = ApiIndex(t.tree, t.version)
    return api, bodies.text_index_for(api)


def _vllm_layer_call(api, index, path, model):
    """(names vLLM's own forward passes the layers, the layer forward's signature), read by DC106's reader."""
    from driftcheck.probes.forward_replay_drift import layer_arguments

    cls = index.class_by_name(path, model)
    assert cls is not None, f"{model} not in {path}"
    found = layer_arguments(api, index, path, cls, ["layers", "start_layer", "end_layer"])
    assert found is not None and found[2] is not None, f"cannot read {model}.forward's layer call"
    _required, _line, forward, values = found
    return set(values), forward.signature


def _layer_class(signature, calls):
    """A decoder layer whose forward has exactly `signature`'s parameters; a call binds like the real one."""
    parts, star = [], False
    for p in signature.params:
        if p.kind == "posonly" or p.kind == "pos":
            parts.append(p.name + ("=None" if p.has_default else ""))
        elif p.kind == "vararg":
            parts.append("*" + p.name)
            star = True
        elif p.kind == "kwonly":
            if not star:
                parts.append("*")
                star = True
            parts.append(p.name + ("=None" if p.has_default else ""))
        elif p.kind == "varkw":
            parts.append("**" + p.name)
    ns: dict = {}
    exec(f"def forward({', '.join(parts)}):\n    return hidden_states, residual\n", ns)  # noqa: S102

    class Layer:
        forward = ns["forward"]

        def __call__(self, *args, **kwargs):
            calls.append(dict(inspect.signature(self.forward).bind(*args, **kwargs).arguments))  # TypeError as vLLM
            return self.forward(*args, **kwargs)

    return Layer


def _run_replay(source: str, module: str, model: str, signature, config: dict):
    """Run the client's `_patched_forward` on a stand-in model; (layer calls, imports it made)."""
    tree = ast.parse(source)
    fn = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "_patched_forward")
    calls, imports = [], []

    def scaling(**kw):
        return ("llama_4_scaling", tuple(sorted(kw.items())))

    def fake_import(name, globals=None, locals=None, fromlist=(), level=0):
        imports.append((name, tuple(fromlist or ())))
        if name == module:
            return SimpleNamespace(_get_llama_4_scaling=scaling)
        raise ModuleNotFoundError(name)

    ns = {"__builtins__": {**vars(builtins), "__import__": fake_import},
          "get_pp_group": lambda: SimpleNamespace(is_first_rank=True, is_last_rank=True),
          "get_tp_group": lambda: SimpleNamespace(rank_in_group=1), "islice": itertools.islice,
          "IntermediateTensors": dict, "inspect": inspect}
    exec(compile(ast.Module(body=[fn], type_ignores=[]), "custom_worker.py", "exec"), ns)  # noqa: S102

    def vllm_forward(self, *args, **kwargs):
        raise AssertionError("the replay must not call vLLM's forward")

    vllm_forward.__module__, vllm_forward.__qualname__ = module, f"{model}.forward"
    Model = type(model, (), {"forward": vllm_forward})
    m = Model()
    layer = _layer_class(signature, calls)
    m.layers, m.start_layer, m.end_layer = [layer(), layer(), layer()], 0, 3
    m.config = SimpleNamespace(**config)
    m.norm = lambda h, r: (h, None)
    m.embed_input_ids = m.get_input_embeddings = lambda ids: "embedded"
    m._extension = SimpleNamespace(_layer_ids=frozenset())
    ns["_patched_forward"](m, "input_ids", "positions", None, None)
    return calls, imports


L4 = {"original_max_position_embeddings": 8192, "beta": 0.1}


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("path,model", FAMILIES)
def test_patched_replay_passes_what_vllm_own_forward_passes(version, path, model):
    api, index = _target(version)
    expected, signature = _vllm_layer_call(api, index, path, model)
    module = path.removesuffix(".py").replace("/", ".")
    after = fixture(FIX_ID, AFTER[version])
    for config in ({}, {"llama_4_scaling": L4}):
        calls, imports = _run_replay(after, module, model, signature, config)
        assert len(calls) == 3 and all(set(c) == expected for c in calls), (model, calls, expected)
        if "llama_4_scaling" in expected:  # what DeepseekV2Model.forward computes, from the same config
            want = ("llama_4_scaling", (("original_max_position_embeddings", 8192), ("positions", "positions"),
                                        ("scaling_beta", 0.1))) if config else None
            assert all(c["llama_4_scaling"] == want for c in calls)
            assert imports == [(module, ("_get_llama_4_scaling",))]
        else:
            assert imports == []  # no other architecture imports DeepSeek's module
    # and the released replay passed less than vLLM does only for the architectures DC106 named
    calls, _ = _run_replay(fixture(FIX_ID, "before.py"), module, model, signature, {})
    assert (set(calls[0]) != expected) == (model == "DeepseekV2Model")


@pytest.mark.parametrize("layers_from", ["0.11.0", "0.16.0"])
def test_guarded_replay_passes_the_argument_only_where_the_layer_takes_it(layers_from):
    """The --guard form on DeepSeek layers from before (0.11.0) and after (0.16.0) llama_4_scaling."""
    api, index = _target(layers_from)
    path = "vllm/model_executor/models/deepseek_v2.py"
    expected, signature = _vllm_layer_call(api, index, path, "DeepseekV2Model")
    calls, imports = _run_replay(fixture(FIX_ID, "guard_after.py"), "vllm.model_executor.models.deepseek_v2",
                                 "DeepseekV2Model", signature, {"llama_4_scaling": L4})
    assert all(set(c) == expected for c in calls)
    assert ("llama_4_scaling" in expected) == (layers_from == "0.16.0")
    # on 0.11.0 the helper vLLM 0.16 uses does not exist: the guarded code must not import it
    assert bool(imports) == (layers_from == "0.16.0")


# ------------------------------------------------------------------ fix --apply on the released client, rescan
@pytest.mark.parametrize("version", VERSIONS)
def test_fix_apply_on_speculators_0_3_0_leaves_no_error_and_no_dc106(tmp_path, version):
    client = tmp_path / "client"
    with zipfile.ZipFile(client_sources("speculators", "0.3.0")) as z:
        z.extractall(client)
    fix = run_cli("fix", "--apply", "--vllm", version, "--client", str(client), timeout=600)
    assert fix.returncode == 0, fix.stderr
    # DC106 is a warning (the replay fails only on a model whose layers take the argument): fixed only when asked
    assert FIX_ID not in fix.stderr and "left alone: 1 warning(s) with a fix" in fix.stderr and "DC106" in fix.stderr
    fix = run_cli("fix", "--apply", "--only", "DC106", "--vllm", version, "--client", str(client), timeout=600)
    assert fix.returncode == 0, fix.stderr
    assert FIX_ID in fix.stderr
    scan = run_cli("scan", "--vllm", version, "--client", str(client), "-f", "json")
    result = json.loads(scan.stdout)
    assert result["summary"]["error"] == 0 and result["summary"]["unknown"] == 0, result["findings"]
    assert [f for f in result["findings"] if f["rule"] == "DC106"] == []
    worker = (client / WORKER).read_text()
    assert 'layer_kwargs["llama_4_scaling"] = llama_4_scaling' in worker and "**layer_kwargs" in worker
    compile(worker, WORKER, "exec")
    shutil.rmtree(client)


# ------------------------------------------------------------------ translation edge cases (synthetic clients, real 0.16.0)
SYNTHETIC = '''import types

from vllm.distributed import get_pp_group


def _replay(self, input_ids, pos, intermediate_tensors=None, inputs_embeds=None):
    hidden_states = self.embed_input_ids(input_ids)
    residual = None{extra}
    for layer in self.layers[self.start_layer:self.end_layer]:
        hidden_states, residual = layer(pos, hidden_states, residual)
    hidden_states, _ = self.norm(hidden_states, residual)
    return hidden_states


def install(model):
    base = model.model
    base.forward = types.MethodType(_replay, base)
'''


def test_target_names_become_the_clients(tmp_path):
    """The client calls its positions `pos` and slices the layers: vLLM's `positions` becomes `pos`, the guard's
    first layer is `self.layers[self.start_layer]`, and the positional call gets the dict after its arguments."""
    out = run_fix(tmp_path, SYNTHETIC.format(extra=""), FIX_ID, "0.16.0", guard=True)
    compile(out, "client.py", "exec")
    assert "positions=pos," in out and "positions=positions" not in out
    assert 'inspect.signature(self.layers[self.start_layer].forward).parameters' in out
    assert "layer(pos, hidden_states, residual, **layer_kwargs)" in out
    assert out.splitlines()[3] == "import inspect"


def test_a_name_the_client_uses_is_left_for_a_person(tmp_path):
    from driftcheck.scan.pipeline import ScanOptions
    from driftcheck.fix.fixer import FixOptions, plan_fixes
    from driftcheck.sources.targets import resolve_client, resolve_vllm

    source = SYNTHETIC.format(extra="\n    llama_4_scaling = 1.0  # the client's own")
    (tmp_path / "client").mkdir()
    (tmp_path / "client" / "client.py").write_text(source)
    plan = plan_fixes(resolve_vllm("0.16.0", CACHE_DIR), resolve_client(str(tmp_path / "client"), CACHE_DIR),
                      ScanOptions(cache_dir=CACHE_DIR, client_vllm="0.11.0"), FixOptions(only=[FIX_ID]))
    assert plan.changes == []
    [(finding, why)] = plan.skipped
    assert finding.rule == "DC106" and "would rebind the client's own names" in why and "llama_4_scaling" in why
