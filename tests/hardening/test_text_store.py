"""The whole-tree text answers kept on disk give the same findings as a fresh computation, and a damaged store is
ignored, not trusted."""

from __future__ import annotations

import json
import shutil

from conftest import CACHE_DIR, run_cli

from driftcheck.vllm_model.text_index import TextIndex


def scan_json(cache):
    proc = run_cli("scan", "--vllm", "0.32.0", "--client", "speculators==0.3.0", "-f", "json", "--cache-dir", str(cache))
    assert proc.returncode == 1, proc.stderr
    data = json.loads(proc.stdout)
    return [(f["rule"], f["symbol"], f["client"]["line"], f["vllm"]["path"] if f["vllm"] else None) for f in data["findings"]]


def test_stored_answers_match_fresh_ones_and_damage_is_ignored(tmp_path):
    cache = tmp_path / "cache"
    shutil.copytree(CACHE_DIR / "sources", cache / "sources")
    fresh = scan_json(cache)
    stores = sorted((cache / "text").glob("*.json"))
    assert stores, "the scan kept no text answers"
    assert scan_json(cache) == fresh  # answered from the stores
    # the client-result cache (units.py) would answer without reading the text stores: drop it before each rescan
    for store in stores:
        store.write_bytes(json.dumps({"format": TextIndex.STORE_FORMAT, "classes": {"x": [[1, 2]]}, "mentions": [],
                                      "extra": 3}).encode())
    shutil.rmtree(cache / "units", ignore_errors=True)
    assert scan_json(cache) == fresh  # damaged stores are recomputed
    for store in stores:
        store.write_bytes(b"\x80\x04garbage")
    shutil.rmtree(cache / "units", ignore_errors=True)
    assert scan_json(cache) == fresh
    assert all(json.loads(s.read_bytes())["format"] == TextIndex.STORE_FORMAT for s in stores)  # and rewritten whole
