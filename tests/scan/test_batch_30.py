"""Twenty-fifth session: batch 30's findings and the leftovers of batch 29, on the real releases they came from.

Each case is reduced from a real client's line; the expected lines and conditions are read from the release's own
sources (`source_line`), never written in.
"""

from __future__ import annotations

from conftest import source_line, vllm_sources
from scan.helpers import scan_at_release, scan_trees


# 30b U2 (vLLM 0.28.0's self-scan): `vllm/utils/humming.py`'s `__getattr__` starts `spec = _EXPORTS.get(name)` then
# `if spec is None: raise AttributeError(...)`; the 50 names it lazily loads were "cannot tell", and so was a name
# not in the table, which certainly fails.
_FACADE = '''\
_EXPORTS: dict[str, str] = {"Schema": "other_pkg.schema:Schema", "tune": "other_pkg.tune"}


def __getattr__(name: str):
    spec = _EXPORTS.get(name)
    if spec is None:
        raise AttributeError(f"module has no attribute {name!r}")
    return _load(spec)
'''


def _facade_findings(tmp_path, getattr_module: str) -> list[tuple[int, str]]:
    vllm = {"vllm/__init__.py": "", "vllm/lazy.py": getattr_module}
    client = {"plug/__init__.py": "", "plug/use.py": "from vllm.lazy import Schema\nfrom vllm.lazy import Gone\n"}
    result = scan_trees(tmp_path, vllm, client, only=["DC002"])
    assert not result.internal_errors
    return [(f.client.line, f.severity) for f in result.findings] + [(u.client.line, "unknown") for u in result.unknown]


def test_30b_u2_a_getattr_that_looks_names_up_in_a_table_serves_only_its_keys(tmp_path):
    assert _facade_findings(tmp_path, _FACADE) == [(2, "error")]


def test_30b_u2_twin_a_table_lookup_that_does_not_refuse_the_rest_may_serve_any_name(tmp_path):
    opened = _FACADE.replace("    if spec is None:\n        raise AttributeError(f\"module has no attribute {name!r}\")\n",
                             "    if spec is None:\n        return _fallback(name)\n")
    assert _facade_findings(tmp_path, opened) == [(2, "unknown")]


def test_30b_u2_on_the_release_a_name_humming_lists_is_served_and_one_it_lacks_fails(tmp_path):
    listed = source_line(vllm_sources("0.28.0"), "vllm/utils/humming.py", '"HummingInputSchema":')
    assert listed > 0
    result = scan_at_release(tmp_path, {"use.py": "from vllm.utils.humming import HummingInputSchema\n"
                                                  "from vllm.utils.humming import NoSuchSchema\n"}, "0.28.0", ["DC002"])
    assert not result.internal_errors and result.unknown == []
    assert [(f.client.line, f.severity, f.symbol) for f in result.findings] == [
        (2, "error", "vllm.utils.humming.NoSuchSchema")]
