"""DC113 not-a-container (probes/not_a_container.py): a vLLM value whose class the target makes a record, used as a container.

Real releases: vLLM 0.9.2 made `SchedulerOutput.scheduled_cached_reqs` one `CachedRequestData` (0.9.1:
`list[CachedRequestData]`); a KV connector's loop over it (ggaaooppeenngg/cpumemconnector, batch 23a's miss) fails on
0.9.2 and later. Fake trees: the plugin shapes NC1-NC3 (code that runs: a class with `__getitem__`, an abstract
annotation whose subclass is iterable, an external iterable base) and their twins, which fail and are errors.
"""

from __future__ import annotations

from behaviour import scan_files
from scan.helpers import edited, plugin_shape, scan_trees

CONNECTOR = """
    from vllm.v1.core.sched.output import SchedulerOutput


    class MyConnector:
        def build_connector_meta(self, scheduler_output: SchedulerOutput):
            out = [r.req_id for r in scheduler_output.scheduled_new_reqs]
            for cached_req in scheduler_output.scheduled_cached_reqs:
                out.append(cached_req.req_id)
            ids = [r.req_id for r in scheduler_output.scheduled_cached_reqs]
            try:
                pairs = list(scheduler_output.scheduled_cached_reqs)
            except TypeError:
                pairs = []
            for rid in scheduler_output.scheduled_cached_reqs.req_ids:
                out.append(rid)
            n = len(scheduler_output.scheduled_cached_reqs) + len(scheduler_output.scheduled_new_reqs)
            first = scheduler_output.scheduled_cached_reqs[0]
            if "r1" in scheduler_output.scheduled_cached_reqs:
                n += 1
            return out, ids, pairs, n, first
"""


def _dc113(result) -> list[tuple[str, int]]:
    return [(f.severity, f.client.line) for f in result.findings if f.rule == "DC113"]


def test_dc113_loops_over_cached_reqs_fail_from_0_9_2(tmp_path):
    result = scan_files(tmp_path, {"conn.py": CONNECTOR}, vllm="0.16.0", only=["DC113"])
    # the `for` and the comprehension are errors, `list()` inside `try: ... except TypeError` a warning; the list of
    # new requests and the record's own `req_ids` are iterable
    assert _dc113(result) == [("error", 7), ("error", 9), ("warning", 11), ("error", 16), ("error", 17), ("error", 18)]
    first = result.findings[0]
    assert "`SchedulerOutput.scheduled_cached_reqs`" in first.message and "'CachedRequestData' object is not iterable" \
        in first.message
    assert first.vllm.path == "vllm/v1/core/sched/output.py" and "scheduled_cached_reqs: CachedRequestData" in first.vllm.code
    assert first.fix is None
    assert [f.message.split(": ", 1)[0].split(" `Sched")[0] for f in result.findings[3:]] == [
        "`len()` measures", "indexing reads", "`in` searches"]
    assert "object of type 'CachedRequestData' has no len()" in result.findings[3].message
    assert "'CachedRequestData' object is not subscriptable" in result.findings[4].message


def test_dc113_absent_on_0_9_1_where_it_was_a_list(tmp_path):
    assert _dc113(scan_files(tmp_path, {"conn.py": CONNECTOR}, vllm="0.9.1", only=["DC113"])) == []


def _twin(tmp_path, prefix: str, rel: str, *edits: tuple[str, str], client_extra: dict | None = None) -> list:
    """The shape's DC113 findings with `edits` ((old, new) pairs) made to its vLLM file `rel`."""
    vllm, client = plugin_shape(prefix)
    return _dc113(scan_trees(tmp_path, edited(vllm, rel, *edits), {**client, **(client_extra or {})}, only=["DC113"]))


NO_GETITEM = ("def __getitem__(self, i)", "def at(self, i)")
NO_ITER = ("def __iter__(self)", "def all(self)")


def test_dc113_nc1_getitem_makes_a_record_iterable(tmp_path):
    assert _twin(tmp_path, "NC1", "vllm/output.py") == []


def test_dc113_nc1_twin_without_getitem_is_an_error(tmp_path):
    assert _twin(tmp_path, "NC1", "vllm/output.py", NO_GETITEM) == [("error", 6)]


def test_dc113_nc1_twin_optional_record_is_an_error_too(tmp_path):
    # `X | None`: neither a record nor None can be iterated
    optional = ("scheduled_cached_reqs: CachedRequestData", "scheduled_cached_reqs: CachedRequestData | None")
    assert _twin(tmp_path, "NC1", "vllm/output.py", NO_GETITEM, optional) == [("error", 6)]


def test_dc113_nc1_twin_union_with_a_list_is_not_certain(tmp_path):
    either = ("scheduled_cached_reqs: CachedRequestData", "scheduled_cached_reqs: CachedRequestData | list")
    assert _twin(tmp_path, "NC1", "vllm/output.py", NO_GETITEM, either) == []


def test_dc113_nc2_an_iterable_vllm_subclass_keeps_it_unknown(tmp_path):
    assert _twin(tmp_path, "NC2", "vllm/batch.py") == []


def test_dc113_nc2_twin_no_subclass_iterates_is_an_error(tmp_path):
    assert _twin(tmp_path, "NC2", "vllm/batch.py", NO_ITER) == [("error", 6)]


def test_dc113_nc2_twin_a_client_subclass_that_iterates_keeps_it_unknown(tmp_path):
    mine = {"plug/mine.py": "from vllm.batch import Batch\n\n\nclass Mine(Batch):\n    def __iter__(self):\n"
                            "        return iter(())\n"}
    assert _twin(tmp_path, "NC2", "vllm/batch.py", NO_ITER, client_extra=mine) == []


def test_dc113_nc3_an_external_base_keeps_it_unknown(tmp_path):
    assert _twin(tmp_path, "NC3", "vllm/config.py") == []


def test_dc113_nc3_twin_a_plain_class_is_an_error(tmp_path):
    assert _twin(tmp_path, "NC3", "vllm/config.py", ("class Stages(UserList):", "class Stages:")) == [("error", 5)]


def test_dc113_explain_names_the_record_change_not_a_none():
    from driftcheck.report.explain import explain_text

    def tb(exc: str) -> list[dict]:
        return explain_text('Traceback (most recent call last):\n  File "/srv/conn.py", line 349, in build_connector_meta\n'
                            f'    for cached_req in scheduler_output.scheduled_cached_reqs:\n{exc}\n')

    for exc in ("TypeError: 'CachedRequestData' object is not iterable", "TypeError: object of type 'CachedRequestData' "
                "has no len()", "TypeError: 'CachedRequestData' object is not subscriptable"):
        [d] = tb(exc)
        assert d["rule"] == "DC113" and "scheduled_cached_reqs" in d["vllm_change"]
    for exc in ("TypeError: 'NoneType' object is not iterable", "TypeError: object of type 'int' has no len()"):
        assert all(x["rule"] != "DC113" for x in tb(exc))


def test_dc113_calls_that_do_not_iterate_their_record_argument(tmp_path):
    # max/min of several values compare them, iter(f, sentinel) calls f, filter(f, xs) iterates xs only, async for
    # asks for __aiter__: none of these is a loop over the record
    src = CONNECTOR.split("            out = [")[0] + (
        "            r = scheduler_output.scheduled_cached_reqs\n"
        "            a = max(scheduler_output.scheduled_cached_reqs, r, key=id)\n"
        "            b = iter(scheduler_output.scheduled_cached_reqs, None)\n"
        "            c = list(filter(scheduler_output.scheduled_cached_reqs, [1]))\n"
        "            d = list(filter(None, scheduler_output.scheduled_cached_reqs))\n"
        "            return a, b, c, d\n")
    assert _dc113(scan_files(tmp_path, {"conn.py": src}, vllm="0.16.0", only=["DC113"])) == [("error", 10)]


def test_dc113_a_value_built_by_a_call_is_named_by_its_annotation(tmp_path):
    vllm, client = plugin_shape("NC2")
    result = scan_trees(tmp_path, edited(vllm, "vllm/batch.py", NO_ITER), client, only=["DC113"])
    [f] = result.findings
    assert "which is `Batch` (what `make_batch()` returns) in vLLM 0.99.0" in f.message


# 29g C1: a str key on `QUANTIZATION_METHODS`, a dict of configs up to vLLM 0.6.4 and a list of names since 0.6.5
# (bitpolar's "legacy" registration `QUANTIZATION_METHODS["bitpolar"] = cfg`, flute-kernel's `["flute"] = cfg`, old
# vLLM tests' `QUANTIZATION_METHODS["fp8"].get_min_capability()`): TypeError, list indices must be integers.
_REGISTER = {"plugin/register.py": """\
    from vllm.model_executor.layers.quantization import QUANTIZATION_METHODS


    def register(cfg_cls):
        if "bitpolar" not in QUANTIZATION_METHODS:
            QUANTIZATION_METHODS["bitpolar"] = cfg_cls
        return QUANTIZATION_METHODS["fp8"].get_min_capability(), QUANTIZATION_METHODS[0]
"""}


def test_dc113_a_str_key_on_vllms_quantization_list_is_an_error(tmp_path):
    from conftest import source_line, vllm_sources

    result = scan_files(tmp_path, _REGISTER, vllm="0.16.0", only=["DC113"])
    assert not result.internal_errors
    assert _dc113(result) == [("error", 6), ("error", 7)]
    line = source_line(vllm_sources("0.16.0"), "vllm/model_executor/layers/quantization/__init__.py",
                       "QUANTIZATION_METHODS: list[str] =")
    assert f"`QUANTIZATION_METHODS` is a `list` in vLLM 0.16.0 (vllm/model_executor/layers/quantization/__init__.py:" \
           f"{line}), indexed by integers: `QUANTIZATION_METHODS['bitpolar']` raises TypeError" in result.findings[0].message


_SEQUENCES = {
    "vllm/__init__.py": "",
    "vllm/tables.py": """\
        METHODS = ["a", "b"]
        PAIRS = ("a", "b")
        REGISTRY = {"a": 1}
        SET_ELSEWHERE = []
    """,
    "vllm/other.py": """\
        from vllm import tables

        tables.SET_ELSEWHERE = {}
    """,
}


def test_dc113_str_keys_fail_on_sequences_only(tmp_path):
    client = {"c.py": """\
        import vllm.tables as t
        from vllm.tables import METHODS, PAIRS, REGISTRY, SET_ELSEWHERE


        def f(cfg):
            METHODS["mine"] = cfg
            x = t.PAIRS["a"]
            del METHODS["a"]
            REGISTRY["mine"] = cfg
            y = METHODS[0], PAIRS[-1], METHODS[1:]
            SET_ELSEWHERE["mine"] = cfg
            try:
                z = METHODS["a"]
            except TypeError:
                z = None
            return x, y, z
    """}
    result = scan_trees(tmp_path, _SEQUENCES, client, only=["DC113"])
    assert not result.internal_errors
    assert [(f.client.line, f.severity, f.symbol) for f in result.findings] == [
        (6, "error", "vllm.tables.METHODS['mine']"), (7, "error", "vllm.tables.PAIRS['a']"),
        (8, "error", "vllm.tables.METHODS['a']"), (13, "warning", "vllm.tables.METHODS['a']")]


def test_dc113_twin_a_sequence_the_client_rebinds_on_vllms_module_is_its_own(tmp_path):
    client = {"c.py": """\
        import vllm.tables
        from vllm.tables import METHODS

        vllm.tables.METHODS = {}


        def f(cfg):
            METHODS["mine"] = cfg
    """}
    result = scan_trees(tmp_path, _SEQUENCES, client, only=["DC113"])
    assert result.findings == [] and not result.internal_errors


def test_dc113_explain_names_the_registry_that_became_a_list():
    from driftcheck.report.explain import explain_text

    [d] = explain_text('Traceback (most recent call last):\n  File "/srv/plugin/register.py", line 6, in register\n'
                       '    QUANTIZATION_METHODS["bitpolar"] = cfg_cls\n'
                       'TypeError: list indices must be integers or slices, not str\n')
    assert d["rule"] == "DC113" and "QUANTIZATION_METHODS" in d["vllm_change"]
