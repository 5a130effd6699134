"""DC117 orphaned-override (probes/orphaned_override.py, client_model/orphaned_overrides.py).

Fake trees: the plugin shape MB3 (vllm-plugin-FL's `FusedMoEFL.select_experts`, batch 25b): the client's vLLM
(0.98.0, the shape's baseline_src) had `FusedMoE.select_experts` and called it; the target (0.99.0) routes through
`self.router.select_experts(...)` on a `Router`. The override never runs: DC117 says so, and DC006's read of
`self.zero_expert_num` in its body is a warning. Each twin keeps a caller that may reach the client's method, or
takes away what makes it an override, and the read stays an error.
"""

from __future__ import annotations

from scan.helpers import SHAPES, edited, plugin_shape, scan_trees, vllm_tree, write_tree

LAYER = "plug/layer.py"
MOE = "vllm/moe.py"


def _baseline(tmp_path, edits=()) -> str:
    root = next(SHAPES.glob("MB3_*")) / "baseline_src"
    files = {str(p.relative_to(root)): p.read_text() for p in root.rglob("*.py")}
    for old, new in edits:
        files = edited(files, MOE, (old, new))
    base = vllm_tree(tmp_path / "baseline", files)
    write_tree(base, {"vllm/_version.py": '__version__ = "0.98.0"\n'})
    return str(base)


def _scan(tmp_path, vllm_edits=(), client_edits=(), baseline_edits=(), client_files=None, baseline=True):
    vllm, client = plugin_shape("MB3")
    for old, new in vllm_edits:
        vllm = edited(vllm, MOE, (old, new))
    for old, new in client_edits:
        client = edited(client, LAYER, (old, new))
    client = {**client, **(client_files or {})}
    result = scan_trees(tmp_path, vllm, client, only=["DC006", "DC117"],
                        client_vllm=_baseline(tmp_path, baseline_edits) if baseline else None)
    assert result.internal_errors == []
    return [(f.rule, f.severity, f.client.line) for f in result.findings], result


def test_dc117_mb3_an_override_nothing_calls_any_more(tmp_path):
    found, result = _scan(tmp_path)
    assert found == [("DC117", "warning", 5), ("DC006", "warning", 7)]
    dc117 = next(f for f in result.findings if f.rule == "DC117")
    assert "`FusedMoEFL.select_experts` overrides `FusedMoE.select_experts`, a method of vLLM 0.98.0" in dc117.message
    assert "calls `select_experts` only on `Router` objects now (vllm/moe.py:12)" in dc117.message
    assert dc117.vllm.path == MOE and dc117.vllm.line == 6 and dc117.fix is None
    assert "Methods `FusedMoE` has now" not in dc117.message  # it gained none


def test_dc117_mb3_names_the_methods_the_base_gained(tmp_path):
    found, result = _scan(tmp_path, vllm_edits=[("    def forward(self, logits):",
                                                 "    def route(self, logits):\n        return self.router.select_experts(logits)\n\n"
                                                 "    def forward(self, logits):")])
    assert ("DC117", "warning", 5) in found
    dc117 = next(f for f in result.findings if f.rule == "DC117")
    assert dc117.message.endswith("Methods `FusedMoE` has now and vLLM 0.98.0's had not: `route`.")
    dc006 = next(f for f in result.findings if f.rule == "DC006")
    assert "in a method that never runs: `FusedMoEFL.select_experts` overrides" in dc006.message


def test_dc117_mb3_twin_the_client_calls_it(tmp_path):
    found, _ = _scan(tmp_path, client_files={"main.py": (
        "from plug.layer import FusedMoEFL\n\n"
        "assert FusedMoEFL(4).select_experts([0.1, 0.7]) == [0]\n")})
    assert found == [("DC006", "error", 7)]


def test_dc117_mb3_twin_vllm_calls_it_on_its_own_class(tmp_path):
    # the target's FusedMoE no longer defines it, but still calls it on itself (a hook subclasses provide)
    found, _ = _scan(tmp_path, vllm_edits=[("        return self.router.select_experts(logits)",
                                            "        return self.select_experts(logits)")])
    assert found == [("DC006", "error", 7)]


def test_dc117_mb3_twin_vllm_reads_it_by_name(tmp_path):
    found, _ = _scan(tmp_path, vllm_edits=[("        return self.router.select_experts(logits)",
                                            "        return getattr(self.router, 'select_experts')(logits)")])
    assert found == [("DC006", "error", 7)]


def test_dc117_mb3_twin_an_untyped_receiver(tmp_path):
    found, _ = _scan(tmp_path, vllm_edits=[("    def forward(self, logits):\n        return self.router.select_experts(logits)",
                                            "    def forward(self, logits, layers):\n"
                                            "        return [m.select_experts(logits) for m in layers]")])
    assert found == [("DC006", "error", 7)]


def test_dc117_mb3_without_a_baseline_a_name_vllm_calls_elsewhere(tmp_path):
    # no client vLLM to show it was an override: no DC117, but vLLM calls `select_experts` only on Router objects and
    # no client code calls it, so its body never runs either
    found, result = _scan(tmp_path, baseline=False)
    assert found == [("DC006", "warning", 7)]
    assert "`FusedMoEFL.select_experts` is a method no client code calls and this vLLM does not call on the client's " \
           "objects: its vLLM bases do not define it, and vLLM calls `select_experts` only on `Router` objects now" \
           in result.findings[0].message


def test_dc117_mb3_twin_without_a_baseline_a_name_vllm_never_calls(tmp_path):
    # nothing says the method is one of vLLM's hooks: it may be the client's own public method, called by its users
    found, _ = _scan(tmp_path, baseline=False, vllm_edits=[("    def select_experts(self, logits):", "    def route(self, logits):"),
                                                           ("self.router.select_experts(logits)", "self.router.route(logits)")])
    assert found == [("DC006", "error", 7)]


def test_dc117_mb3_the_clients_own_method_is_no_orphaned_override(tmp_path):
    # the client's vLLM never had select_experts on FusedMoE: no DC117 (the body still never runs: a warning)
    found, _ = _scan(tmp_path, baseline_edits=[("    def select_experts(self, logits):", "    def _pick(self, logits):"),
                                               ("return self.select_experts(logits)", "return self._pick(logits)")])
    assert found == [("DC006", "warning", 7)]


def test_dc117_mb3_twin_a_registering_decorator(tmp_path):
    # a decorator may register the method where vLLM finds it by another name: not an orphan
    found, _ = _scan(tmp_path, client_edits=[("class FusedMoEFL(FusedMoE):\n", "HOOKS = []\n\n\nclass FusedMoEFL(FusedMoE):\n"),
                                             ("    def select_experts(self, logits):",
                                              "    @HOOKS.append\n    def select_experts(self, logits):")])
    assert found == [("DC006", "error", 11)]


def test_dc117_mb3_a_passive_decorator_keeps_it_an_orphan(tmp_path):
    found, _ = _scan(tmp_path, client_edits=[("from vllm.moe import FusedMoE\n", "from vllm.moe import FusedMoE\nfrom typing_extensions import override\n"),
                                             ("    def select_experts(self, logits):",
                                              "    @override\n    def select_experts(self, logits):")])
    assert found == [("DC117", "warning", 7), ("DC006", "warning", 9)]


def test_dc117_mb3_twin_the_target_still_has_it(tmp_path):
    found, _ = _scan(tmp_path, vllm_edits=[("    def forward(self, logits):",
                                            "    def select_experts(self, logits):\n        return [0]\n\n"
                                            "    def forward(self, logits):")])
    assert found == [("DC006", "error", 7)]
