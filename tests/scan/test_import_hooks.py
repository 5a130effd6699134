"""An import hook that maps vLLM modules to the client's own (`import_hooks.py`; plugin shape V_, from vllm-kunlun
0.11.1, docs/triage/2026-12-01-unseen-plugins-3.md).

vllm-kunlun's `register()` sets `builtins.__import__` to a hook that, for the modules of a dict literal, imports the
client's module under vLLM's name. `from vllm.v1.sample.rejection_sampler import RejectionSampler` then binds the
client's class, whose `__init__` takes no `sampler`; DC005 reported a missing argument of vLLM's class. A module the
hook maps is one the client has its own copy of (`Usage.shadowed`): its names hold what cannot be known. The twins: a
hook that maps another module, a mapping the client does not ship, and a mapping dict that is not in the installed hook
keep the error; a name the release lacks is `unknown`, naming the hook.
"""

from __future__ import annotations

from scan.helpers import edited, plugin_shape, scan_trees

VLLM, CLIENT = plugin_shape("V")
HOOK = "pkg/__init__.py"
MAPPED = '"vllm.v1.sample.rejection_sampler": "pkg.v1.rejection_sampler",'


def _found(tmp_path, client, rule="DC005"):
    result = scan_trees(tmp_path, VLLM, client)
    return [(f.severity, f.client.path, f.client.line) for f in result.findings if f.rule == rule], result


def test_a_module_the_hook_maps_to_the_clients_own_is_not_vllms(tmp_path):
    found, result = _found(tmp_path, CLIENT)
    assert found == [] and [f for f in result.findings if f.severity == "error"] == []


def test_twins_the_import_stays_vllms(tmp_path):
    twins = {
        "another_module": edited(CLIENT, HOOK, (MAPPED, '"vllm.v1.sample.sampler": "pkg.v1.rejection_sampler",')),
        "a_module_the_client_does_not_ship": edited(CLIENT, HOOK, ('"pkg.v1.rejection_sampler",', '"pkg.v1.gone",')),
        "hook_never_installed": edited(CLIENT, HOOK, ("    builtins.__import__ = _custom_import\n", "")),
    }
    for name, client in twins.items():
        found, _ = _found(tmp_path / name, client)
        assert found == [("error", "pkg/v1/model_runner.py", 6)], name


def test_a_name_the_release_lacks_from_a_mapped_module_is_unknown_naming_the_hook(tmp_path):
    """The client's module defines it and vLLM's does not: which one the import gets depends on when it runs."""
    client = edited(CLIENT, "pkg/v1/model_runner.py",
                    ("import RejectionSampler\n", "import RejectionSampler, SpecDecodeSampler  # noqa: F401\n"))
    own = {**client, "pkg/v1/rejection_sampler.py": client["pkg/v1/rejection_sampler.py"] + "\n\nclass SpecDecodeSampler:\n    pass\n"}
    result = scan_trees(tmp_path / "own", VLLM, own)
    assert [f for f in result.findings if f.severity == "error"] == []
    [u] = [u for u in result.unknown if u.rule == "DC002"]
    assert "import hook (pkg/__init__.py:20) maps that module to its own `pkg/v1/rejection_sampler.py`" in u.message
    # twin: neither module defines it: an ImportError whichever runs
    missing = scan_trees(tmp_path / "missing", VLLM, client)
    assert [(f.rule, f.severity) for f in missing.findings if f.rule == "DC002"] == [("DC002", "error")]
