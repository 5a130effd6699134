"""DC110 vendored-copy-drift on real releases: hs-connectors 0.7.0's copy of vLLM's extract_from_kv_cache."""

from __future__ import annotations

import textwrap

from conftest import CACHE_DIR, client_sources, real_scan, source_line  # noqa: F401
from driftcheck.scan.pipeline import ScanOptions, scan
from driftcheck.sources.targets import resolve_client, resolve_vllm

CONNECTOR = "hs_connectors/mooncake_hidden_states_connector.py"
ORIGINAL = "vllm/distributed/kv_transfer/kv_connector/v1/example_hidden_states_connector.py"


def dc110(result):
    assert not result.internal_errors
    return [f for f in result.findings if f.rule == "DC110"]


def test_present_from_029_where_vllm_changed_its_helper():
    for version in ("0.29.0", "0.32.0"):
        [f] = dc110(real_scan(version, "hs-connectors==0.7.0", "0.28.0"))
        assert f.severity == "warning" and f.when == "silent"
        assert f.client.path == CONNECTOR
        assert f.client.line == source_line(client_sources("hs-connectors", "0.7.0"), CONNECTOR, "def extract_from_kv_cache(")
        assert f.vllm.path == ORIGINAL and f.vllm.code.startswith("def extract_from_kv_cache(")
        diff = f.details["original_diff"]
        assert "-    block_size = kv_cache.shape[1]" in diff and "+    block_size = kv_cache.shape[2]" in diff


def test_absent_while_the_original_is_unchanged():
    assert dc110(real_scan("0.28.0", "hs-connectors==0.7.0", "0.28.0")) == []


def test_a_renamed_copy_is_found_and_an_updated_copy_is_quiet(tmp_path):
    root = tmp_path / "client"
    root.mkdir()
    (root / "copies.py").write_text(textwrap.dedent('''
        import torch
        from vllm.config import VllmConfig


        def my_extract(cache: torch.Tensor, slots: torch.Tensor, n: int) -> torch.Tensor:
            bs = cache.shape[1]
            return cache[slots // bs, slots % bs][:n]


        def updated_extract(kv_cache, slot_mapping, num_tokens):
            block_size = kv_cache.shape[2]
            return kv_cache[slot_mapping // block_size, :, slot_mapping % block_size][:num_tokens]
    '''))
    result = scan(resolve_vllm("0.29.0", CACHE_DIR), [resolve_client(str(root), CACHE_DIR)],
                  ScanOptions(cache_dir=CACHE_DIR, only=["DC110"], client_vllm="0.28.0"))
    [f] = dc110(result)
    assert f.symbol.endswith(":extract_from_kv_cache") and "my_extract" in f.message


def test_quiet_without_the_clients_vllm(tmp_path):
    root = tmp_path / "client"
    root.mkdir()
    (root / "c.py").write_text("from vllm.config import VllmConfig\n\n\ndef f(kv_cache, s, n):\n"
                               "    b = kv_cache.shape[1]\n    return kv_cache[s // b, s % b][:n]\n")
    result = scan(resolve_vllm("0.29.0", CACHE_DIR), [resolve_client(str(root), CACHE_DIR)],
                  ScanOptions(cache_dir=CACHE_DIR, only=["DC110"]))
    assert dc110(result) == []


def test_the_index_shape_is_the_tokens_shape_on_real_release_files():
    """The release index hashes `shape(fn)` (an explicit stack, the first scan's hot path); a client's copy is matched
    through the same hash, so it must be exactly the pre-order `tokens(fn)` walks, on real code."""
    import ast

    from conftest import CACHE_DIR
    from driftcheck.probes.vendored_copy_drift import _functions, shape, tokens
    from driftcheck.sources.targets import resolve_vllm

    tree = resolve_vllm("0.16.0", CACHE_DIR).tree
    checked = 0
    for rel in ("vllm/v1/worker/gpu_model_runner.py", "vllm/v1/core/sched/scheduler.py", "vllm/config/vllm.py"):
        for _qual, fn in _functions(ast.parse(tree.read_text(rel))):
            assert shape(fn) == tokens(fn)[0]
            checked += 1
    assert checked > 100


def _indexed_like_the_whole_file(text_index, rel: str) -> int:
    """Every function `_functions` yields for one file is cut from its text with the same qualname and `def` line, and
    its index entry (from the cut alone) is the entry the whole file's parse gives. Returns how many were checked."""
    import ast

    from driftcheck.probes.vendored_copy_drift import MIN_NODES, _functions, _hash, _index_function, function_regions, shape

    data = text_index.blob(rel)
    regions = {line: region for region in function_regions(data) for line in [region[1]]}
    checked = 0
    for qual, fn in _functions(ast.parse(data)):
        kinds = shape(fn)
        region = regions[fn.lineno]
        assert region[0] == qual
        assert _index_function(text_index, rel, region) == [_hash(kinds) if len(kinds) >= MIN_NODES else None, qual, fn.lineno]
        checked += 1
    return checked


def test_functions_cut_from_the_text_index_as_the_parsed_file_does_on_real_release_files():
    """The index parses only the functions whose text holds the anchors, each cut from its file at the next header
    indented no deeper; on real files that must give exactly the whole-file parse's functions and hashes."""
    from driftcheck.vllm_model.text_index import TextIndex

    index = TextIndex(resolve_vllm("0.16.0", CACHE_DIR).tree)
    rels = ("vllm/v1/worker/gpu_model_runner.py", "vllm/v1/core/sched/scheduler.py", "vllm/config/vllm.py",
            "vllm/model_executor/layers/fused_moe/layer.py", "vllm/engine/arg_utils.py")
    assert all(index.blob(rel) for rel in rels)
    assert sum(_indexed_like_the_whole_file(index, rel) for rel in rels) > 250
    from driftcheck.probes.vendored_copy_drift import _TREES

    assert not _TREES.get(index)  # every cut parsed alone: no file was parsed whole


def test_a_cut_that_does_not_parse_falls_back_to_the_whole_file(tmp_path):
    """Decorators end the function before them; nested functions, a def in a `try` and a class's nested class are not
    yielded; a string holding a `def` line at the function's indent cuts it short, and then the whole file decides."""
    from driftcheck.sources.sources import FolderTree
    from driftcheck.vllm_model.text_index import TextIndex

    (tmp_path / "vllm").mkdir()
    (tmp_path / "vllm" / "m.py").write_text(textwrap.dedent('''
        import functools


        @functools.cache
        def top(a, b):
            def inner(x):
                return x + 1
            return inner(a) + b


        class Engine:
            class Nested:
                def hidden(self):
                    return 1

            @property
            def size(self):
                return self._size * 2

            def cut_by_its_docstring(self):
                text = """
            def not_a_method(self):
                """
                return text.strip()


        try:
            def fallback():
                return 1
        except ImportError:
            def fallback():
                return 2
    '''))
    index = TextIndex(FolderTree(tmp_path))
    from driftcheck.probes.vendored_copy_drift import _TREES, function_regions

    quals = [region[0] for region in function_regions(index.blob("vllm/m.py"))]
    assert quals[:3] == ["top", "Engine.size", "Engine.cut_by_its_docstring"]
    assert "inner" not in quals and "Engine.hidden" not in quals and "Engine.Nested.hidden" not in quals
    assert _indexed_like_the_whole_file(index, "vllm/m.py") == 3
    assert "vllm/m.py" in _TREES[index]  # the docstring's cut did not parse: the whole file answered


def test_every_function_spells_what_its_own_shape_needs_on_real_release_files():
    """The count filter (`spelled`, `_may_spell`) skips a release function's region without parsing it when the region
    holds fewer keywords, brackets or operators than the client function's shape spells. It must never skip a function
    of the same shape: on real files, every function's own region passes its own shape's counts, and a region cut short
    by a string still passes (the parse decides)."""
    import ast

    from driftcheck.probes.vendored_copy_drift import _functions, _may_spell, function_regions, shape, spelled
    from driftcheck.vllm_model.text_index import TextIndex

    index = TextIndex(resolve_vllm("0.32.0", CACHE_DIR).tree)
    checked = rejected = 0
    for rel in ("vllm/v1/worker/gpu_model_runner.py", "vllm/v1/core/sched/scheduler.py", "vllm/config/vllm.py",
                "vllm/model_executor/layers/fused_moe/layer.py", "vllm/entrypoints/openai/serving_chat.py"):
        data = index.blob(rel)
        if not data:
            continue
        regions = {region[1]: region for region in function_regions(data)}
        functions = list(_functions(ast.parse(data)))
        biggest = max((spelled(shape(fn)) for _q, fn in functions), key=lambda need: sum(n for _p, n in need))
        for _qual, fn in functions:
            _q, _line, start, end = regions[fn.lineno]
            assert _may_spell(data, start, end, spelled(shape(fn)))
            rejected += not _may_spell(data, start, end, biggest)
            checked += 1
    assert checked > 200 and rejected > checked // 2  # the filter holds, and it does skip most regions for a big shape

    text = b'def f(self):\n    text = """\ndef not_a_method(self):\n    """\n    return text.strip()\n'
    cut = function_regions(text)[0]
    assert text[cut[2]:cut[3]].count(b'"""') == 1  # cut inside the string
    assert _may_spell(text, cut[2], cut[3], ((b"(", 99),))  # kept: only a parse can tell
    assert not _may_spell(b"def g():\n    return 1\n", 0, 22, ((b"(", 2),))


def test_header_lines_are_the_header_regex_matches_on_real_release_files_and_odd_texts():
    # header_lines finds the lines `_HEADER` matched (a regex tried at every line of a release) from the occurrences
    # of def / class / @: the same (line start, indent, kind, name) on every file of a release and on built texts
    import re
    import zipfile

    from conftest import vllm_sources
    from driftcheck.probes.vendored_copy_drift import header_lines

    header = re.compile(rb"\n([ \t]*)(?:(?:async[ \t]+)?(def|class)[ \t]+(\w+)|@)")

    def by_regex(data: bytes) -> list:
        return [(m.start(), len(m.group(1)), m.group(2), m.group(3)) for m in header.finditer(b"\n" + data)]

    odd = [b"def f(): pass\n", b"  async\tdef g(x):\n", b"async  class C(B):\n", b"xasync def h():\n",
           b"class A(B,\nclass B(C):\n", b"defx = 1\ndef\n(y)\n", b"  @ property\n@\n", b"a = b @ c\n", b"\r\ndef k(): pass",
           b"subclass D(E):\n", b"def def x\n", b"\tclass\tT :\n", b"@dec\n  async def m(self):\n"]
    for data in odd:
        assert header_lines(data) == by_regex(data), data
    with zipfile.ZipFile(vllm_sources("0.16.0")) as zf:
        blobs = [zf.read(n) for n in zf.namelist() if n.endswith(".py")]
    assert sum(len(by_regex(b)) for b in blobs) > 20000
    assert all(header_lines(b) == by_regex(b) for b in blobs)


def test_of_bodies_alike_the_original_named_as_the_copy_is_named(tmp_path):
    # 30d MSG-1: VITA's `mixtral.py` `MixtralAttention.forward` was named a copy of Arctic's, whose body vLLM 0.5.5 had
    # word for word; the qualname, then the file name, decide among originals equally alike
    from scan.helpers import scan_against_own

    body = ("    def forward(self, positions, hidden_states):\n        qkv, _ = self.qkv_proj(hidden_states)\n"
            "        q, k, v = qkv.split([self.q_size, self.kv_size, self.kv_size], dim=-1)\n"
            "        q, k = self.rotary_emb(positions, q, k)\n        attn_output = self.attn(q, k, v)\n"
            "        output, _ = self.o_proj(attn_output)\n        return output\n")
    changed = body.replace("self.attn(q, k, v)", "self.attn(q, k, v, positions)")

    def tree(text: str) -> dict[str, str]:
        return {"vllm/__init__.py": "", "vllm/models/__init__.py": "",
                "vllm/models/arctic.py": "class ArcticAttention:\n" + text,
                "vllm/models/mixtral.py": "class MixtralAttention:\n" + text}
    client = {"vita/mixtral.py": "import vllm\n\n\nclass MixtralAttention:\n" + body}
    result = scan_against_own(tmp_path, tree(body), "0.5.5", tree(changed), client, ["DC110"], "0.10.0")
    [f] = dc110(result)
    assert f.details["original"] == "vllm/models/mixtral.py:MixtralAttention.forward"
