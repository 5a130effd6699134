"""`driftcheck matrix` / `range` on real releases (a few, to stay quick; the full 0.11..0.32 run is bench/)."""

from __future__ import annotations

import json

from conftest import CACHE_DIR, run_cli


def test_matrix_cells_ranges_and_reports(tmp_path):
    proc = run_cli("matrix", "--vllm", "0.11.0,0.12.0,0.16.0,0.17.0", "--client", "speculators==0.3.0",
                   "--client", "speculators==0.4.0", "--out", str(tmp_path), "-j", "2", timeout=600)
    assert proc.returncode == 0, proc.stderr
    data = json.loads((tmp_path / "matrix.json").read_text())
    cells = {(c["vllm"], c["client"]): c for c in data["cells"]}
    assert cells[("0.11.0", "speculators==0.3.0")]["status"] == "ok"
    assert cells[("0.16.0", "speculators==0.3.0")]["status"] == "fail"
    assert {"DC003", "DC005", "DC008", "DC101", "DC103", "DC104", "DC105"} <= set(cells[("0.16.0", "speculators==0.3.0")]["rules"])
    assert [cells[(v, "speculators==0.4.0")]["status"] for v in ("0.12.0", "0.16.0")] == ["ok", "ok"]
    assert cells[("0.17.0", "speculators==0.4.0")]["rules"] == ["DC003"]
    ranges = {r["client"]: r for r in data["ranges"]}
    r40 = ranges["speculators==0.4.0"]
    assert r40["computed"] == ">=0.12.0,<0.17.0" and r40["agrees"] is True
    assert r40["first_break_above"] == "0.17.0" and "eos_token_id" in r40["reason_above"]
    assert ranges["speculators==0.3.0"]["computed"] == ">=0.11.0,<0.12.0"
    for name in ("matrix.md", "matrix.html"):
        assert "speculators" in (tmp_path / name).read_text()
    png = (tmp_path / "matrix.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 5000
    assert data["provenance"]["driftcheck"]


def test_range_reports_declared_next_to_computed():
    proc = run_cli("range", "--vllm", "0.12.0,0.16.0,0.17.0", "--client", "speculators==0.4.0", "--json", timeout=600)
    assert proc.returncode == 0, proc.stderr
    [r] = json.loads(proc.stdout)
    assert r["declared"] and r["computed"] == ">=0.12.0,<0.17.0" and r["rules_above"] == ["DC003"]


def test_bad_ranges_are_usage_errors():
    for spec in ("0.32.0..0.11.0", "banana", "1.0..x"):
        proc = run_cli("matrix", "--vllm", spec, "--client", "speculators==0.4.0", "--out", str(CACHE_DIR / "unused"))
        assert proc.returncode == 2 and proc.stderr.startswith("driftcheck: error:"), (spec, proc.stderr)
        assert "Traceback" not in proc.stderr


def test_no_compatible_release_names_the_closest():
    """Every release breaks (lmcache 0.5.6 over 0.28-0.33): the report gives the errors per release and the newest
    release with the fewest, with its rules and first error, instead of only "no tested release is compatible"."""
    from driftcheck.gate.matrix import Cell, Matrix
    from driftcheck.gate.ranges import compute_range

    spec = "plugin==1.0"
    cells = [Cell("0.30.0", spec, "fail", ["DC001", "DC006"], errors=9, first_error="DC001 a.py:3 gone"),
             Cell("0.31.0", spec, "fail", ["DC006"], errors=8, first_error="DC006 b.py:7 no attribute"),
             Cell("0.32.0", spec, "error", message="could not be fetched"),
             Cell("0.33.0", spec, "fail", ["DC005", "DC006"], errors=8, first_error="DC005 c.py:1 missing")]
    matrix = Matrix(["0.30.0", "0.31.0", "0.32.0", "0.33.0"], [{"spec": spec}], cells, 1.0, 1)
    r = compute_range(matrix, {"spec": spec})
    assert r.computed is None
    assert "errors per release: 0.30.0 9, 0.31.0 8, 0.33.0 8" in r.notes
    assert ("closest: 0.33.0 (8 error(s): DC005, DC006; the first: DC005 c.py:1 missing); "
            "`driftcheck scan --vllm 0.33.0` lists them") in r.notes
    assert any("0.32.0 could not be checked" in n for n in r.notes)
