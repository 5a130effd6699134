"""scan/presummarise.py: a big client's vLLM modules summarised by a forked worker while the client is parsed."""

from __future__ import annotations

import os
import time

from driftcheck.scan import presummarise as presummarise_module
from driftcheck.scan.pipeline import ScanOptions, scan
from driftcheck.scan.presummarise import Presummary, _named_modules, presummarise
from driftcheck.scan.units import MIN_FILES_FOR_POOL
from driftcheck.sources.sources import FolderTree
from driftcheck.sources.targets import resolve_client, resolve_vllm
from driftcheck.storage.cache import SummaryCache
from driftcheck.vllm_model.api_index import ApiIndex
from scan.helpers import vllm_tree, write_tree


def test_named_modules_come_in_the_order_the_client_names_them_with_their_packages():
    files = [b"import os\nfrom vllm.v1.core.sched.scheduler import Scheduler\n",
             b"    import vllm.config, vllm.v1.request as r\nfrom vllm import LLM\nfrom .x import y\nimport vllmx\n",
             b"from   vllm.v1.core.sched.scheduler   import (\n  A,\n)\nfrom torch.vllm import z\n"]
    assert _named_modules(files, "vllm") == ["vllm", "vllm.v1", "vllm.v1.core", "vllm.v1.core.sched",
                                             "vllm.v1.core.sched.scheduler", "vllm.config", "vllm.v1.request"]


def _fake(tmp_path, n_modules: int = 60):
    """A fake vLLM of `n_modules` modules, each importing the next (what the worker follows outward), and a client
    of one file per module (a pool-sized client)."""
    files = {f"vllm/m{i}.py": f"from vllm.m{i + 1} import C{i + 1}\n\nclass C{i}:\n    def run(self, x):\n        return x\n"
             for i in range(n_modules)}
    files[f"vllm/m{n_modules}.py"] = f"class C{n_modules}:\n    pass\n"
    vllm_root = vllm_tree(tmp_path / "vllm-src", files)
    client = write_tree(tmp_path / "client", {f"pkg/f{i}.py": f"from vllm.m{i} import C{i}\n\nC{i}().run(1)\nC{i}().gone()\n"
                                              for i in range(0, n_modules, 2)})
    return vllm_root, client


def test_the_worker_writes_summaries_the_scan_then_reads_from_the_cache(tmp_path):
    vllm_root, client = _fake(tmp_path)
    api = ApiIndex(FolderTree(vllm_root), "0.0.test", cache=SummaryCache(tmp_path / "cache"))
    job = Presummary(api, [p.read_bytes() for p in sorted(client.rglob("*.py"))])
    deadline = time.time() + 60
    while len(list((tmp_path / "cache").rglob("*.json"))) < 62 and time.time() < deadline:
        time.sleep(0.05)
    job.stop()
    # every module the client names, the package, and the odd modules only reached through imports (outward)
    assert len(list((tmp_path / "cache").rglob("*.json"))) == 62
    fresh = ApiIndex(FolderTree(vllm_root), "0.0.test", cache=SummaryCache(tmp_path / "cache"))
    assert fresh.module("vllm.m31") is not None and fresh.cache.hits == 1 and fresh.parsed_files == 0
    assert api.parsed_files == 0  # the worker's work stayed in the worker


def test_stop_ends_a_running_worker_and_is_idempotent(tmp_path, monkeypatch):
    vllm_root, client = _fake(tmp_path, 4)
    monkeypatch.setattr(presummarise_module, "_summarise_outward", lambda api, first: time.sleep(60))
    job = Presummary(ApiIndex(FolderTree(vllm_root), "0.0.test", cache=SummaryCache(tmp_path / "cache")), [b""])
    pid = job._pid
    started = time.time()
    job.stop()
    job.stop()
    assert time.time() - started < 5
    try:
        os.kill(pid, 0)
        alive = True
    except ProcessLookupError:
        alive = False
    assert not alive  # reaped: no zombie left either


def test_only_a_pool_sized_client_with_a_cache_and_two_jobs_gets_a_worker(tmp_path):
    vllm_root, _client = _fake(tmp_path, 2)
    cached = ApiIndex(FolderTree(vllm_root), "0.0.test", cache=SummaryCache(tmp_path / "cache"))
    assert presummarise(cached, [b""] * MIN_FILES_FOR_POOL, jobs=1, min_files=MIN_FILES_FOR_POOL) is None
    assert presummarise(cached, [b""] * (MIN_FILES_FOR_POOL - 1), jobs=2, min_files=MIN_FILES_FOR_POOL) is None
    uncached = ApiIndex(FolderTree(vllm_root), "0.0.test")
    job = presummarise(uncached, [b""] * MIN_FILES_FOR_POOL, jobs=2, min_files=MIN_FILES_FOR_POOL)
    assert job is not None and job._pid is None  # no cache to hand summaries over: no worker
    job = presummarise(cached, [b""] * MIN_FILES_FOR_POOL, jobs=2, min_files=MIN_FILES_FOR_POOL)
    assert job._pid is not None
    job.stop()


def test_a_scan_with_the_worker_reports_what_a_scan_without_it_does(tmp_path, monkeypatch):
    vllm_root, client = _fake(tmp_path, 100)  # 50 client files: a pool-sized client

    def run(name: str, jobs: int) -> dict:
        cache = tmp_path / name
        result = scan(resolve_vllm(str(vllm_root), cache), [resolve_client(str(client), cache)],
                      ScanOptions(cache_dir=cache, jobs=jobs))
        out = result.to_json()
        return {k: out[k] for k in ("findings", "unknown", "internal_errors")}

    started = []
    real = presummarise_module.Presummary.__init__

    def counted(self, api, client_bytes):
        started.append(len(client_bytes))
        real(self, api, client_bytes)

    monkeypatch.setattr(presummarise_module.Presummary, "__init__", counted)
    with_worker = run("two", 2)
    assert started == [50] and 50 >= MIN_FILES_FOR_POOL
    serial = run("one", 1)  # one job: no worker
    assert started == [50]
    assert with_worker == serial
    assert len(with_worker["findings"]) == 50  # each file's `C{i}().gone()`


def test_a_worker_stopped_mid_write_leaves_no_temp_file_in_the_cache(tmp_path, monkeypatch):
    vllm_root, client = _fake(tmp_path, 4)
    real_chmod = os.chmod

    def slow_chmod(path, mode, *args, **kwargs):  # safe_write's step between the temp file and its rename
        if str(path).endswith(".tmp"):
            time.sleep(30)
        return real_chmod(path, mode, *args, **kwargs)

    monkeypatch.setattr(os, "chmod", slow_chmod)  # the worker inherits it; this process writes no cache entry
    job = Presummary(ApiIndex(FolderTree(vllm_root), "0.0.test", cache=SummaryCache(tmp_path / "cache")),
                     [p.read_bytes() for p in client.rglob("*.py")])
    deadline = time.time() + 20
    while not list((tmp_path / "cache").rglob("*.tmp")) and time.time() < deadline:
        time.sleep(0.01)
    assert list((tmp_path / "cache").rglob("*.tmp"))  # the worker is inside a write
    started = time.time()
    job.stop()
    assert time.time() - started < 2  # stopped by SIGTERM, not by the kill after two seconds
    assert not list((tmp_path / "cache").rglob("*.tmp"))
