"""Per-file units (driftcheck/scan/units.py): the same report serially, in worker processes and from the caches.

A small multi-file client against the miniature vLLM: a patch set in one file that another file's use
depends on, a client subclass in one file used from another, plain drift in several files.
"""

from __future__ import annotations

import json

import pytest

from driftcheck.scan import units
from driftcheck.scan.pipeline import ScanOptions, scan
from driftcheck.sources.targets import resolve_client, resolve_vllm

from scan.helpers import MINIVLLM, write_tree

CLIENT = {
    "pkg/__init__.py": "",
    "pkg/patches.py": """
        from vllm.v1.core.sched.scheduler import Scheduler

        Scheduler.my_hook = lambda self: None
    """,
    "pkg/gen.py": """
        from vllm.v1.core.sched.scheduler import Scheduler
        from vllm.v1.core.kv_cache_utils import get_kv_cache_config_from_groups


        class Generator:
            def __init__(self, cfg, kv):
                self.scheduler = Scheduler(cfg, kv, None, 16, bogus=1)

            def step(self):
                self.scheduler.my_hook()
                self.scheduler.finish_request("r")
                return get_kv_cache_config_from_groups(None, kv_cache_specs=[])
    """,
    "pkg/sub.py": """
        from vllm.v1.core.sched.scheduler import Scheduler


        class MyScheduler(Scheduler):
            def extra(self):
                return self.not_there
    """,
    "pkg/use_sub.py": """
        import vllm.no_such_module
        from vllm.v1.request import Request
        from pkg.sub import MyScheduler


        def tokens(req: Request) -> int:
            return req.num_tokenz
    """,
    "pkg/plain.py": """
        from vllm.v1.request import Request


        def make():
            return Request(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12)
    """,
}


def _report(tmp_path, jobs: int, cache: bool = True, cache_dir=None):
    croot = tmp_path / "client"
    vllm = resolve_vllm(str(MINIVLLM), tmp_path / "cache")
    client = resolve_client(str(croot), tmp_path / "cache")
    result = scan(vllm, [client], ScanOptions(cache_dir=cache_dir or tmp_path / "cache", use_cache=cache, jobs=jobs))
    doc = result.to_json()
    stats = doc.pop("stats")
    doc["provenance"] = None
    return json.dumps(doc, sort_keys=True), stats


@pytest.fixture
def client(tmp_path, monkeypatch):
    monkeypatch.setattr(units, "MIN_FILES_FOR_POOL", 1)
    write_tree(tmp_path / "client", CLIENT)
    return tmp_path


def test_serial_and_parallel_reports_are_identical(client):
    serial, s_stats = _report(client, jobs=1, cache=False)
    parallel, p_stats = _report(client, jobs=2, cache=False)
    assert s_stats["jobs"] == 1 and p_stats["jobs"] == 2
    # the memory a CI runner needs for this client: this process's peak or a worker's, whichever is larger
    assert 10 < s_stats["peak_rss_mib"] <= p_stats["peak_rss_mib"] < 4096
    assert serial == parallel
    assert json.loads(serial)["findings"], "the client should have drift to report"


def test_a_small_client_runs_its_whole_client_rules_beside_its_units_with_the_same_report(tmp_path, monkeypatch):
    """Under MIN_FILES_FOR_POOL files, two cores fork one worker for the whole-client rules while this process runs
    the per-file units: the report is the serial one."""
    write_tree(tmp_path / "client", CLIENT)
    assert len(CLIENT) < units.MIN_FILES_FOR_POOL
    beside = []
    original = units._whole_beside_units
    monkeypatch.setattr(units, "_whole_beside_units", lambda *a: beside.append(1) or original(*a))
    serial, s_stats = _report(tmp_path, jobs=1, cache=False)
    assert beside == [] and s_stats["jobs"] == 1
    parallel, p_stats = _report(tmp_path, jobs=2, cache=False)
    assert beside == [1] and p_stats["jobs"] == 2
    assert serial == parallel and json.loads(serial)["findings"]


@pytest.mark.parametrize("slow", ["worker", "here"])
def test_whoever_claims_the_whole_client_rules_the_report_is_the_same(tmp_path, monkeypatch, slow):
    """The worker and this process split the whole-client rules through a shared counter: a late worker leaves them
    all to this process, a slow unit here leaves them all to the worker, and the report is the serial one."""
    import time

    write_tree(tmp_path / "client", CLIENT)
    serial, _ = _report(tmp_path, jobs=1, cache=False)
    split = []
    original = units._whole_beside_units
    monkeypatch.setattr(units, "_whole_beside_units", lambda *a: split.append(original(*a)) or split[-1])
    if slow == "worker":
        started = units._worker_started
        monkeypatch.setattr(units, "_worker_started", lambda: time.sleep(1.0) or started())
    else:
        run_unit = units.run_unit
        monkeypatch.setattr(units, "run_unit", lambda *a: time.sleep(1.0 / len(CLIENT)) or run_unit(*a))
    parallel, stats = _report(tmp_path, jobs=2, cache=False)
    assert serial == parallel and stats["jobs"] == 2
    [(worker, here)] = split
    idle, busy = (worker, here) if slow == "worker" else (here, worker)
    assert idle.items == [] and busy.items


def test_units_give_the_whole_client_answer(client, monkeypatch):
    """Every rule run per file gives what it gives over the whole client at once (the scan before units)."""
    per_file, _ = _report(client, jobs=1, cache=False)
    monkeypatch.setattr(units, "per_file", lambda probe: False)
    whole, stats = _report(client, jobs=1, cache=False)
    assert per_file == whole


def test_warm_rerun_and_one_changed_file(client):
    cold, stats = _report(client, jobs=1)
    assert stats["units_run"] == len(CLIENT) - 1  # __init__.py does not import vLLM
    warm, stats = _report(client, jobs=1)
    assert warm == cold and stats["client_cached"] == 1 and stats["units_run"] == 0

    # a change inside one function: that file's unit runs again, the others come from the cache
    plain = client / "client/pkg/plain.py"
    plain.write_text(plain.read_text().replace("11, 12)", "11, 12, 13)"))
    changed, stats = _report(client, jobs=1)
    assert stats["units_run"] == 1 and stats["units_cached"] == len(CLIENT) - 2
    fresh, _ = _report(client, jobs=1, cache=False)
    assert changed == fresh

    # a change to a global fact (what the client patches onto vLLM): every file that may depend on it runs again
    patches = client / "client/pkg/patches.py"
    patches.write_text(patches.read_text().replace("my_hook", "other_hook"))
    changed, stats = _report(client, jobs=1)
    assert stats["units_run"] == len(CLIENT) - 1
    fresh, _ = _report(client, jobs=1, cache=False)
    assert changed == fresh
    assert "my_hook" in changed  # the use in gen.py is now a finding: it depended on patches.py


def test_only_strings_naming_a_missing_vllm_module_tie_the_units_together(tmp_path, monkeypatch):
    """DC001 reads where the whole client spells a missing module's name (a `sys.modules` registration in another
    file). Moving that string re-runs every unit; moving any other string (a module the target has, torch's) re-runs
    only its own file's, where it used to invalidate every unit."""
    monkeypatch.setattr(units, "MIN_FILES_FOR_POOL", 1)
    write_tree(tmp_path / "client", {
        "pkg/a.py": "from vllm.gone.mod import thing\n",
        "pkg/b.py": "import sys\nimport vllm\n\nsys.modules['vllm.gone.mod'] = sys.modules[__name__]\n",
        "pkg/c.py": "import vllm\n\nNAMES = ['vllm.v1.request', 'torch.nn.Module']\n",
    })
    cold, stats = _report(tmp_path, jobs=1)
    [f] = json.loads(cold)["findings"]
    assert f["rule"] == "DC001" and f["severity"] == "warning" and "pkg/b.py:4" in f["message"]

    c = tmp_path / "client/pkg/c.py"
    c.write_text("# a comment moves the strings down\n" + c.read_text())
    moved, stats = _report(tmp_path, jobs=1)
    assert stats["units_run"] == 1 and moved == cold

    b = tmp_path / "client/pkg/b.py"
    b.write_text("# a comment moves the registration down\n" + b.read_text())
    moved, stats = _report(tmp_path, jobs=1)
    assert stats["units_run"] == 3  # a.py's DC001 names b.py's line
    assert "pkg/b.py:5" in json.loads(moved)["findings"][0]["message"]
    assert moved == _report(tmp_path, jobs=1, cache=False)[0]


def test_caches_are_json(client):
    _report(client, jobs=1)
    entries = list((client / "cache" / "units").rglob("*.json"))
    assert entries
    for entry in entries:
        json.loads(entry.read_bytes())


def test_a_scan_loads_the_clients_baseline_once_however_many_units_ask(tmp_path, monkeypatch):
    """Every unit's context asks for the baseline vLLM (DC008 reads it); one scan resolves it once, so its
    whole-tree text is read once, not once per client file."""
    from driftcheck.scan import pipeline
    from scan.helpers import MINIVLLM_OLD

    monkeypatch.setattr(units, "MIN_FILES_FOR_POOL", 1)
    patch = """
        import types

        import vllm

        def _fwd(self, ids):
            return self.get_input_embeddings(ids)

        def install(model):
            model.forward = types.MethodType(_fwd, model)
    """
    write_tree(tmp_path / "client", {f"pkg/p{i}.py": patch for i in range(4)})
    resolved = []
    original = pipeline.resolve_vllm
    monkeypatch.setattr(pipeline, "resolve_vllm", lambda *a, **k: resolved.append(a[0]) or original(*a, **k))
    vllm = resolve_vllm(str(MINIVLLM), tmp_path / "cache")
    client = resolve_client(str(tmp_path / "client"), tmp_path / "cache")
    result = scan(vllm, [client], ScanOptions(cache_dir=tmp_path / "cache", use_cache=False, jobs=1, only=["DC008"],
                                              client_vllm=str(MINIVLLM_OLD)))
    assert len(result.findings) == 4 and {f.rule for f in result.findings} == {"DC008"}
    assert resolved == [str(MINIVLLM_OLD)]
    assert result.baselines == {"client": "0.98.0"}


def test_every_global_fact_of_usage_is_in_the_units_digest(tmp_path):
    """A unit's cached result may be reused only while the facts it reads from other files are the same: every field
    of Usage is either the unit's own (its lists, the files, what the visits fill) or part of the global digest, so a
    fact a later change adds is covered without being named (a fact left out once let a unit go stale when a patch
    in another file changed)."""
    import dataclasses

    from driftcheck.client_model.client import ClientSource
    from driftcheck.client_model.uses import Loc, Rebinding, Usage
    from driftcheck.scan.unit_cache import UNIT_OWN, global_digest
    from driftcheck.sources.sources import FolderTree

    assert set(UNIT_OWN) == {*units._PER_FILE, *units._VISIT_TIME, "files", "unread_packages"}
    source = ClientSource(FolderTree(write_tree(tmp_path, {"pkg/a.py": "x = 1\n"})), [], "c")
    base = global_digest(Usage(), source, [], {})
    samples = {
        "worker_extensions": [("pkg.ext.Ext", Loc("a.py", 1, 1, "x"))], "worker_classes": [("pkg.w.W", Loc("a.py", 1, 1, "x"))],
        "client_set_attrs": {"x"}, "patched": {("vllm.m", "f")}, "grafted_classes": {"pkg.C": []},
        "subclass_members": {"vllm.C": {"m": ("pkg.D", "a.py", 1)}}, "client_overrides": {"vllm.C": {"m": []}},
        "client_subclass_members": {"pkg.C": {"m"}}, "client_class_table": {"pkg.C": ({"m"}, [])},
        "client_vllm_bases": {"pkg.C": ["vllm.C"]},
        "registered_by_name": {"w": [("register_buffer", "a.py:1", "loop")]}, "replacements": {"vllm.C": []},
        "set_on_results": {("vllm.C", "x"): ("a.py:1", "C.m")},
        "rebound": {("vllm.m", "f"): [Rebinding("a.py:1", "m.f", "pkg.a.g", "g")]}, "union_stores": [(None, "x", "a.py:1")],
        "overlay": {"vllm.own": "vllm/own.py"}, "shadowed": {"vllm.logger": ("vllm/logger.py", "0" * 40)},
        "mounted": {"vllm.v1.x": ("pkg/x.py", "pkg/launch.py:1")},
        "redirected": {"vllm.v1.y": ("pkg/y.py", "pkg/__init__.py:1")},
        "installed": {"vllm.v1.z": "setup.sh:1"},
        "drop_ins": {"vllm.v1.ops.k": ("kernels/k.py", "kernels/a.py:1")},
        "rewritten": {"vllm/logger.py": ("docker/patch.py:3", ["helper"])},
        "set_by_path": {"vllm.model_executor.layers.fla.ops.chunk": ["chunk_gated_delta_rule"]},
        "stand_ins": {"vllm.C": {"m": ("pkg.D", "a.py:1")}},
        "open_extensions": [("reads the configured `c.worker_extension_cls`", Loc("a.py", 1, 1, "x"))],
        "own_packages": {"pkg_hf"},
        "partial_package": "`pkg.sub.m` (a.py:1)",
    }
    global_fields = [f.name for f in dataclasses.fields(Usage) if f.name not in UNIT_OWN]
    assert sorted(samples) == sorted(global_fields), "a new Usage field: give it a sample here (or list it in UNIT_OWN)"
    for name, value in samples.items():
        assert global_digest(Usage(**{name: value}), source, [], {}) != base, name


DIAMOND = '''
from vllm.v1.core.sched.scheduler import Scheduler
from vllm.v1.request import Request
from vllm.v1.worker.gpu_worker import Worker


class A(Scheduler):
    pass


class B(Request):
    pass


class C(Worker):
    pass


class D(A, B, C):
    pass
'''

_DIGEST_OF = '''
import sys
from pathlib import Path
from driftcheck.client_model.client import load_client
from driftcheck.client_model.usage import analyse_client
from driftcheck.scan.unit_cache import global_digest
from driftcheck.sources.sources import FolderTree
from driftcheck.vllm_model.api_index import ApiIndex
api = ApiIndex(FolderTree(Path(sys.argv[1])), "0.99.0")
source = load_client(FolderTree(Path(sys.argv[2])), "client")
usage = analyse_client(source, api)
print(usage.client_vllm_bases["pkg.d.D"], global_digest(usage, source, [f.rel for f in source.files], {}))
'''


def test_the_global_facts_are_the_same_in_every_process(tmp_path):
    """The units' cache key reads the global facts: a fact whose order follows a set's (the hash seed's, a new one per
    process) changed the key from one run to the next, so after any edit every unit ran again (a one-file edit of
    vLLM 0.16.0's tree as a client took as long as a cold scan). A class's vLLM bases come in the order of its bases."""
    import os
    import subprocess
    import sys

    write_tree(tmp_path / "client", {"pkg/__init__.py": "", "pkg/d.py": DIAMOND})
    outputs = set()
    for seed in range(6):
        env = dict(os.environ, PYTHONHASHSEED=str(seed))
        proc = subprocess.run([sys.executable, "-c", _DIGEST_OF, str(MINIVLLM), str(tmp_path / "client")], env=env,
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        outputs.add(proc.stdout)
    [only] = outputs
    assert only.startswith("['vllm.v1.core.sched.scheduler.Scheduler', 'vllm.v1.request.Request', "
                           "'vllm.v1.worker.gpu_worker.Worker']"), only
