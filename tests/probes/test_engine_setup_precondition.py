"""DC108 engine-setup-precondition on real releases: the KV-cache-layout step vLLM's engine core added in 0.29."""

from __future__ import annotations

import textwrap

from conftest import CACHE_DIR, client_sources, real_scan, source_line, vllm_sources  # noqa: F401
from driftcheck.scan.pipeline import ScanOptions, scan
from driftcheck.sources.targets import resolve_client, resolve_vllm

GEN = "speculators/data_generation/vllm_hidden_states_generator.py"


def dc108(result):
    return [f for f in result.findings if f.rule == "DC108"]


def test_present_from_029_at_the_kv_cache_config_call():
    for version in ("0.29.0", "0.32.0"):
        [f] = dc108(real_scan(version, "speculators==0.4.0"))
        assert f.client.path == GEN
        assert f.client.line == source_line(client_sources("speculators", "0.4.0"), GEN, "kv_cache_config = get_kv_cache_config_from_groups(")
        assert (f.vllm.path, f.vllm.line) == ("vllm/config/cache.py", _raise_line(version))
        assert f.details["setup"] == "resolve_kv_cache_layout"
        path, line = f.details["engine_call"].split(":")
        assert path == "vllm/v1/engine/core.py"
        assert "resolve_kv_cache_layout(" in source_text(version, path).splitlines()[int(line) - 1]


def _raise_line(version: str) -> int:
    """The `raise` whose message says the layout "has not been resolved yet", read from the release."""
    lines = source_text(version, "vllm/config/cache.py").splitlines()
    [line] = [i + 1 for i, ln in enumerate(lines)
              if ln.lstrip().startswith("raise ") and any("has not been resolved yet" in x for x in lines[i:i + 4])]
    return line


def source_text(version: str, rel: str) -> str:
    import zipfile

    with zipfile.ZipFile(vllm_sources(version)) as z:
        return z.read(rel).decode()


def test_absent_before_030_and_on_the_seed_pair():
    assert dc108(real_scan("0.28.0", "speculators==0.4.0")) == []
    assert dc108(real_scan("0.16.0", "speculators==0.3.0")) == []


def test_absent_when_the_client_does_the_setup(tmp_path):
    root = tmp_path / "client"
    root.mkdir()
    (root / "c.py").write_text(textwrap.dedent("""
        from vllm.v1.attention.backends.utils import resolve_kv_cache_layout
        from vllm.v1.core.kv_cache_utils import get_kv_cache_config_from_groups


        def build(vllm_config, executor, groups, memory):
            layout = resolve_kv_cache_layout(vllm_config, executor.get_supported_kv_cache_layouts(), [])
            executor.set_kv_cache_layout(layout.name)
            return get_kv_cache_config_from_groups(vllm_config, groups, memory)
    """))
    result = scan(resolve_vllm("0.32.0", CACHE_DIR), [resolve_client(str(root), CACHE_DIR)],
                  ScanOptions(cache_dir=CACHE_DIR, only=["DC108"]))
    assert result.findings == [] and result.unknown == []
    (root / "c.py").write_text((root / "c.py").read_text().replace("    layout = resolve_kv_cache_layout", "    layout = None  #")
                               .replace("    executor.set_kv_cache_layout(layout.name)\n", ""))
    result = scan(resolve_vllm("0.32.0", CACHE_DIR), [resolve_client(str(root), CACHE_DIR)],
                  ScanOptions(cache_dir=CACHE_DIR, only=["DC108"]))
    assert [f.client.line for f in result.findings] == [8]  # the get_kv_cache_config_from_groups(...) line


def test_the_substring_prefilter_keeps_every_file_the_precondition_regex_matches():
    """`_may_say_not_yet` only skips the regex where it cannot match: on every file of a real release, and on
    spellings the regex's case folding accepts."""
    from driftcheck.vllm_model.facts import NOT_YET_BYTES, _may_say_not_yet
    from driftcheck.vllm_model.text_index import TextIndex

    for text in (b"raise RuntimeError('KV cache NOT Initialized yet')", b"never been called", b"Not SET UP"):
        assert NOT_YET_BYTES.search(text) and _may_say_not_yet(text)
    assert not _may_say_not_yet(b"raise ValueError('bad block size')")
    blobs = TextIndex(resolve_vllm("0.32.0", CACHE_DIR).tree).blobs()
    matching = [rel for rel, data in blobs.items() if NOT_YET_BYTES.search(data)]
    skipped = [rel for rel, data in blobs.items() if not _may_say_not_yet(data)]
    assert len(matching) > 50 and len(skipped) > len(blobs) // 3  # it skips much, and drops none of these:
    assert not set(matching) & set(skipped)
