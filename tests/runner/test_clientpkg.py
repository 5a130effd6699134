import importlib
import os
import subprocess
import sys

import pytest

from driftcheck.runner import clientpkg


def fake_client(root):
    pkg = root / "speculators"
    (pkg / "data_generation").mkdir(parents=True)
    # like speculators 0.3.0 on transformers 5: the top-level __init__ cannot be imported
    (pkg / "__init__.py").write_text("raise ImportError('training stack missing')\n")
    (pkg / "data_generation" / "__init__.py").write_text("")
    (pkg / "data_generation" / "vllm_hidden_states_generator.py").write_text("VALUE = 42\n")
    (pkg / "data_generation" / "custom_worker.py").write_text("WORKER = 'ok'\n")
    return pkg


def test_package_dir_accepts_the_package_or_its_parent(tmp_path):
    pkg = fake_client(tmp_path)
    assert clientpkg.package_dir(tmp_path) == pkg.resolve()
    assert clientpkg.package_dir(pkg) == pkg.resolve()
    with pytest.raises(FileNotFoundError):
        clientpkg.package_dir(tmp_path / "speculators" / "data_generation")


def test_shim_loads_the_client_files_without_its_init(tmp_path, monkeypatch):
    pkg = fake_client(tmp_path / "client")
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.setenv("PYTHONPATH", "")
    try:
        clientpkg.install_shim(pkg, tmp_path / "shim")
        mod = importlib.import_module(clientpkg.GENERATOR_MODULE)
        assert mod.VALUE == 42 and mod.__file__.startswith(str(pkg))
        # a spawned process (as vLLM's CPU workers are) finds the worker extension by name too
        out = subprocess.run([sys.executable, "-c", "import speculators.data_generation.custom_worker as w; print(w.WORKER)"],
                             capture_output=True, text=True, env=dict(os.environ), check=True)
        assert out.stdout.strip() == "ok"
    finally:
        for name in [m for m in sys.modules if m == "speculators" or m.startswith("speculators.")]:
            del sys.modules[name]
