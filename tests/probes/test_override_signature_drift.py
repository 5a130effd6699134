"""DC109 override-signature-drift on real releases: vLLM's own calls of methods a client overrides."""

from __future__ import annotations

import textwrap
import zipfile

from conftest import CACHE_DIR, vllm_sources  # noqa: F401
from driftcheck.scan.pipeline import ScanOptions, scan
from driftcheck.sources.targets import resolve_client, resolve_vllm

RUNNER = """
    from vllm.v1.worker.gpu_model_runner import GPUModelRunner


    class MyRunner(GPUModelRunner):
        def load_model(self, eep_scale_up: bool = False):
            pass

        def initialize_kv_cache(self, kv_cache_config):
            pass


    class ForwardingRunner(GPUModelRunner):
        def initialize_kv_cache(self, kv_cache_config, **kwargs):
            pass

        def load_model(self, *args, **kwargs):
            pass


    def patched_init(self, kv_cache_config):
        pass


    GPUModelRunner.initialize_kv_cache = patched_init
"""


def _client(tmp_path, text: str = RUNNER):
    root = tmp_path / "client" / "plug"
    root.mkdir(parents=True)
    (root / "runner.py").write_text(textwrap.dedent(text))
    return root.parent


def dc109(tmp_path, version: str, client_vllm: str = "0.16.0", text: str = RUNNER):
    result = scan(resolve_vllm(version, CACHE_DIR), [resolve_client(str(_client(tmp_path, text)), CACHE_DIR)],
                  ScanOptions(cache_dir=CACHE_DIR, only=["DC109"], client_vllm=client_vllm))
    assert not result.internal_errors
    return [f for f in result.findings if f.rule == "DC109"]


def _def_line(needle: str, text: str = RUNNER) -> int:
    [line] = [i for i, t in enumerate(textwrap.dedent(text).splitlines(), 1) if needle in t]
    return line


def _call_line(version: str, rel: str, needle: str) -> int:
    with zipfile.ZipFile(vllm_sources(version)) as z:
        lines = z.read(rel).decode().splitlines()
    [line] = [i for i, text in enumerate(lines, 1) if needle in text]
    return line


def test_absent_on_the_clients_own_vllm(tmp_path):
    assert dc109(tmp_path, "0.16.0") == []


def test_new_keywords_vllm_passes_to_overrides_are_errors(tmp_path):
    found = dc109(tmp_path, "0.20.0")
    by = {(f.client.line, f.details["argument"]): f for f in found}
    load_def, init_def = _def_line("def load_model(self, eep"), _def_line("def initialize_kv_cache(self, kv_cache_config):")
    patch_def = _def_line("def patched_init")
    assert set(by) == {(load_def, "load_dummy_weights"), (init_def, "is_profiling"), (patch_def, "is_profiling")}
    assert all(f.severity == "error" for f in found)
    profiling = by[(init_def, "is_profiling")]
    assert (profiling.vllm.path, profiling.vllm.line) == (
        "vllm/v1/worker/gpu_model_runner.py",
        _call_line("0.20.0", "vllm/v1/worker/gpu_model_runner.py", "self.initialize_kv_cache(minimal_config, is_profiling=True)"))
    assert by[(patch_def, "is_profiling")].details["how"] == "patch"
    load = by[(load_def, "load_dummy_weights")]
    assert load.vllm.path == "vllm/v1/worker/gpu_worker.py" and "load_model(load_dummy_weights=" in load.vllm.code


def test_overrides_that_take_kwargs_are_quiet(tmp_path):
    found = dc109(tmp_path, "0.32.0")
    forwarding = {_def_line("kv_cache_config, **kwargs"), _def_line("def load_model(self, *args")}
    assert found and all(f.client.line not in forwarding for f in found)
    assert {"kv_cache_allocation_context", "is_profiling", "load_dummy_weights"} == {f.details["argument"] for f in found}


def test_a_call_the_clients_vllm_already_made_is_not_reported(tmp_path):
    # load_model(self) was already called with eep_scale_up= in 0.16: the client ran, so vLLM never reached it for it
    text = """
        from vllm.v1.worker.gpu_model_runner import GPUModelRunner


        class OldRunner(GPUModelRunner):
            def load_model(self):
                pass
    """
    assert dc109(tmp_path, "0.16.0", "0.14.0", text) == []


def test_without_the_clients_vllm_it_is_a_warning(tmp_path):
    root = _client(tmp_path)
    result = scan(resolve_vllm("0.20.0", CACHE_DIR), [resolve_client(str(root), CACHE_DIR)],
                  ScanOptions(cache_dir=CACHE_DIR, only=["DC109"]))
    found = [f for f in result.findings if f.rule == "DC109"]
    assert found and {f.severity for f in found} == {"warning"}


def test_a_call_inside_a_method_the_client_replaces_without_super_is_skipped(tmp_path):
    """vLLM 0.20.0 calls `initialize_kv_cache(..., is_profiling=True)` only from `_init_minimal_kv_cache_for_profiling`:
    a client class that replaces that method never reaches the call, unless its own version calls super()'s."""
    template = """
        from vllm.v1.worker.gpu_model_runner import GPUModelRunner


        class MyRunner(GPUModelRunner):
            def initialize_kv_cache(self, kv_cache_config):
                pass

            def _init_minimal_kv_cache_for_profiling(self):
                {body}

            def load_model(self, eep_scale_up: bool = False, load_dummy_weights: bool = False):
                return super().load_model(eep_scale_up, load_dummy_weights)
    """
    replaced = dc109(tmp_path / "a", "0.20.0", text=template.format(body="pass"))
    assert "is_profiling" not in {f.details["argument"] for f in replaced}
    extended = dc109(tmp_path / "b", "0.20.0", text=template.format(body="return super()._init_minimal_kv_cache_for_profiling()"))
    assert "is_profiling" in {f.details["argument"] for f in extended}


def test_the_one_pass_table_of_called_methods_is_the_per_name_search():
    """`files_calling` lists every `.name(` of a release in one pass; for each name it must give exactly the files a
    search for that one name gives, in the same order (names that prefix others, calls spread over lines)."""
    import re

    from driftcheck.vllm_model.receivers import files_calling
    from driftcheck.vllm_model.api_index import ApiIndex
    from driftcheck.vllm_model.text_index import TextIndex

    api = ApiIndex(resolve_vllm("0.23.0", CACHE_DIR).tree)
    index = TextIndex(api.tree)
    names = ["load_model", "load_weights", "initialize_kv_cache", "initialize_kv_cache_tensors", "forward",
             "execute_model", "get_kv_cache_spec", "sample_tokens", "determine_available_memory", "compile_or_warm_up_model",
             "profile_run", "_dummy_run", "get_model", "block_size", "linear", "uint8", "gguf", "no_such_method_anywhere"]
    for name in names:
        call = re.compile(rb"\." + re.escape(name.encode()) + rb"\s*\(")
        alone = [rel for rel in index.files_mentioning(name) if call.search(index.blob(rel))]
        assert files_calling(api, index, name) == alone, name
    assert len(files_calling(api, index, "forward")) > 20 and files_calling(api, index, "no_such_method_anywhere") == []


TRICKY = '''
class Runner:
    @decorate(lambda self: self.load_model())
    def step(self):
        out = (self.model
               .load_model(1))
        items = [w.load_model() for w in self.workers if w.load_model]
        return self.call(fn=lambda: self.load_model(x=1)), out, items


def load_model():
    try:
        runner.load_model()
    except TypeError:
        pass
'''


def test_walking_only_the_lines_that_name_a_method_finds_the_calls_a_whole_walk_finds():
    """`_calls_of` enters only nodes whose lines hold the name: the same calls, in the same order, with the same
    ancestors as a walk of every node, on vLLM's biggest files and on calls spread over lines, in decorators,
    comprehensions and lambdas."""
    import ast

    from driftcheck.probes.override_signature_drift import _calls_of, _lines_holding
    from driftcheck.vllm_model.api_index import ApiIndex

    api = ApiIndex(resolve_vllm("0.23.0", CACHE_DIR).tree)
    files = [(rel, api.tree.read_bytes(rel)) for rel in ("vllm/v1/worker/gpu_model_runner.py", "vllm/v1/engine/core.py",
                                                          "vllm/v1/worker/gpu_worker.py", "vllm/model_executor/models/llama.py")]
    files.append(("tricky.py", TRICKY.encode()))
    names = ["load_model", "initialize_kv_cache", "execute_model", "forward", "get", "append", "no_such_method"]
    compared = 0
    for rel, data in files:
        tree = ast.parse(data)
        for name in names:
            full_parents: dict = {}
            full = _calls_of(tree, name, None, full_parents)
            parents: dict = {}
            pruned = _calls_of(tree, name, _lines_holding(data, name.encode()), parents)
            assert [id(c) for c in pruned] == [id(c) for c in full], (rel, name)
            for call in pruned:
                node = call
                while node is not tree:
                    assert parents[id(node)] is full_parents[id(node)]
                    node = parents[id(node)]
            compared += len(full)
            assert len(parents) <= len(full_parents)
    assert compared > 50
    tricky = ast.parse(TRICKY)
    assert len(_calls_of(tricky, "load_model", _lines_holding(TRICKY.encode(), b"load_model"), {})) == 5


def test_methods_without_super_read_only_where_the_word_is_are_what_unparsing_every_method_finds():
    """`_methods_without_super` unparses only the methods whose lines hold `super`; on every class of a release
    (and on line breaks `ast` does not count as `splitlines` does) it finds what unparsing every method found."""
    import ast
    import re

    from driftcheck.probes.override_signature_drift import _methods_without_super

    def reference(cls):
        return {n.name for n in cls.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                and not re.search(rf"super\(\s*\w*\s*,?\s*\w*\s*\)\.{re.escape(n.name)}\b", ast.unparse(n))}

    checked = calling = 0
    with zipfile.ZipFile(vllm_sources("0.16.0")) as zf:
        for name in sorted(n for n in zf.namelist() if n.startswith("vllm/model_executor/") and n.endswith(".py")):
            text = zf.read(name).decode("utf-8")
            for cls in (n for n in ast.walk(ast.parse(text)) if isinstance(n, ast.ClassDef)):
                found = _methods_without_super(cls, text)
                assert found == reference(cls), (name, cls.name)
                checked += 1
                calling += len([n for n in cls.body if isinstance(n, ast.FunctionDef)]) - len(found)
    assert checked > 1000 and calling > 100  # many classes, and many methods that do call super
    text = "class A(B):\n\x0c\n    def f(self):\n        x = '\x1c\x0c'\n        return super().f()\n\n    def g(self):\n        pass\n"
    [cls] = [n for n in ast.walk(ast.parse(text)) if isinstance(n, ast.ClassDef)]
    assert _methods_without_super(cls, text) == reference(cls) == {"g"}
