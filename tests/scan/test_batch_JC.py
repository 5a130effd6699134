"""Session of 2026-12-06 (JC): misses left open by earlier batches. Each shape's `vllm_src` is the release its client
was written for (the client runs there: `client/main.py`); `_new_release` edits it into the release that breaks it.

JC1 (batch 34e's left-open item): tenstorrent/vllm-tt-plugin (e3fc849) at vLLM 0.34.0 merges a lane's cached request
data with `cached.resumed_req_ids |= lane_cached.resumed_req_ids`. An augmented assignment reads the member before it
stores it, so on 0.34.0's `CachedRequestData` (no `resumed_req_ids`) the line raises AttributeError; DC006 said "this
assignment creates a new attribute that vLLM never reads", a warning. Now `x.m += v` is a read of `m` (an error where
the class certainly lacks it, a warning under a hasattr guard) and creates no member the client's other reads could
be credited with. Twins: a member the client assigns first (`x.m = 0` then `x.m += 1`), one vLLM's class has, and a
client subclass's `self.m += 1` where the vLLM base sets `m` stay quiet.

JC2 (batch 34d's left-open miss): aehng/Tokens' tokens_vllm builds its vLLM subclasses inside functions, after their
own imports of vLLM (`_build_state()` defines `_PredictiveModelState(DefaultModelState)` and rebinds a module
placeholder through `global`), so that the package imports without vLLM. Their methods were never visited: a
`self.max_num_reqsx` in them gave nothing. A class a function defines is now a client class, its bases read in that
function's names, its methods visited with its `self`; only where no other definition or module binding shares its
name. Twins: the members vLLM's class has; two functions defining a class of the same name (neither is read).

JC3 (the same batch's side observation): `super().m(...)` in a method of a client class whose vLLM bases lack `m`
gave nothing, at module level too. `super()` looks only at the classes after this one, so it is an AttributeError when
the line runs; vllm-ascend 0.23.0's `NPUModelRunner.postprocess` calls `super().postprocess(...)`, which vLLM 0.23.0's
Model Runner V2 lacks, but nothing calls that method (no client code, no file of vLLM): a warning naming the dead
method. Twins: a client base that defines it, a class another client class mixes in with more bases, a worker
extension (mixed into vLLM's worker), a member vLLM's base has.

JC5 (this session's own sweep: vllm-spyre 1.10.0 at vLLM 0.18.0, which JC4 first got wrong): vLLM builds its waiting
queue with `create_request_queue(policy) -> RequestQueue`, whose returns build an FCFS queue (a `deque`) or a priority
queue; JC4 typed `self.waiting` as the abstract `RequestQueue`, and the plugin's `self.waiting.popleft()` became ten
false errors. A factory whose returns build several classes gives no one type (as a factory method's attribute never
did); and a member a subclass has from a class the standard library implements in C (`deque.popleft`) counts, so
`queue.popleft()` on a parameter annotated `RequestQueue` is the warning "only FCFSRequestQueue defines it", not an
error (it was one before this session too). Twins: a subclass that is no deque keeps the error.
"""

from __future__ import annotations

from scan.helpers import edited, plugin_shape, scan_trees


def _dc006(result):
    return [(f.severity, f.client.line, f.message) for f in result.findings if f.rule == "DC006"]


def _errors(result):
    return [(f.rule, f.client.path, f.client.line) for f in result.findings if f.severity == "error"]


JC1_VLLM, JC1_CLIENT = plugin_shape("JC1")
LANE = "tt_plug/lane_scheduler.py"
JC1_NEW = edited(edited(JC1_VLLM, "vllm/v1/core/sched/output.py",
                        ("    resumed_req_ids: set[str] = field(default_factory=set)\n", "")),
                 "vllm/v1/core/sched/scheduler.py", ("        self.num_preempted = 0\n", ""))


def test_jc1_the_release_it_was_written_for_is_quiet(tmp_path):
    assert _errors(scan_trees(tmp_path, JC1_VLLM, JC1_CLIENT)) == []


def test_jc1_augmented_assignment_of_a_missing_member_is_an_error(tmp_path):
    found = _dc006(scan_trees(tmp_path, JC1_NEW, JC1_CLIENT))
    # main.py:11 reads it too, off its module-level `cached = CachedRequestData.make_empty()` (typed since 26c M1/26j M3)
    assert sorted((sev, line) for sev, line, _m in found) == [("error", 9), ("error", 11), ("error", 21), ("warning", 14)]
    by_line = {line: (sev, message) for sev, line, message in found}
    assert "no attribute 'resumed_req_ids'" in by_line[9][1] and "AttributeError when this line runs" in by_line[9][1]
    assert "creates a new attribute" not in by_line[9][1]
    assert "no attribute 'num_preempted'" in by_line[21][1]
    # line 14 is the client's own plain store (`cached.num_merges = 0`): the `+=` after it (line 15) reads what it set
    assert by_line[14][0] == "warning" and "creates a new attribute" in by_line[14][1]
    assert 15 not in by_line
    # vLLM's own members read by `+=` (req_ids, num_scheduled_steps) are no finding
    assert {8, 20} & set(by_line) == set()


def test_jc1_guarded_augmented_assignment_is_a_warning(tmp_path):
    client = edited(JC1_CLIENT, LANE, ("    cached.resumed_req_ids |= set(lane_cached.req_ids)\n",
                                       "    if hasattr(cached, \"resumed_req_ids\"):\n"
                                       "        cached.resumed_req_ids |= set(lane_cached.req_ids)\n"))
    found = {line: sev for sev, line, _m in _dc006(scan_trees(tmp_path, JC1_NEW, client))}
    assert found[10] == "warning"


def test_jc1_twin_the_client_assigns_it_first(tmp_path):
    client = edited(JC1_CLIENT, LANE, ("    cached.req_ids += lane_cached.req_ids\n",
                                       "    cached.req_ids += lane_cached.req_ids\n    cached.resumed_req_ids = set()\n"),
                    ("        self.num_scheduled_steps += 1\n",
                     "        self.num_scheduled_steps += 1\n        self.num_preempted = 0\n"))
    assert _errors(scan_trees(tmp_path, JC1_NEW, client)) == []


JC2_VLLM, JC2_CLIENT = plugin_shape("JC2")
STATE = "tokens_plug/state.py"
JC2_NEW = edited(edited(JC2_VLLM, "vllm/v1/worker/gpu/model_states/default.py",
                        ("self.max_num_reqs_padded = ", "self.max_num_reqs_aligned = "),
                        ("def remove_requests(", "def remove_request(")),
                 "vllm/model_executor/models/phi3.py", ("def get_input_embeddings(", "def embed_input_ids("))


def test_jc2_the_release_it_was_written_for_is_quiet(tmp_path):
    assert _errors(scan_trees(tmp_path, JC2_VLLM, JC2_CLIENT)) == []


def test_jc2_methods_of_a_vllm_subclass_a_function_defines_are_checked(tmp_path):
    found = sorted((sev, line, msg) for sev, line, msg in _dc006(scan_trees(tmp_path, JC2_NEW, JC2_CLIENT)))
    assert [(sev, line) for sev, line, _m in found] == [("error", 13), ("error", 18), ("error", 30)]
    assert "'max_num_reqs_padded'" in found[0][2] and "`DefaultModelState`" in found[0][2]
    assert "'remove_requests'" in found[1][2]  # `super().remove_requests(...)`: JC3 in a function's class
    assert "'get_input_embeddings'" in found[2][2] and "`Phi3ForCausalLM`" in found[2][2]


def test_jc2_twin_two_functions_defining_one_class_name_are_not_read(tmp_path):
    client = edited(JC2_CLIENT, STATE, ("class _PredictivePhi3(Phi3ForCausalLM):", "class _PredictiveModelState(Phi3ForCausalLM):"),
                    ("PredictivePhi3ForCausalLM = _PredictivePhi3\n", "PredictivePhi3ForCausalLM = _PredictiveModelState\n"))
    assert _dc006(scan_trees(tmp_path, JC2_NEW, client)) == []


JC3_VLLM, JC3_CLIENT = plugin_shape("JC3")
RUNNER = "npu_plug/model_runner.py"
JC3_NEW = edited(JC3_VLLM, "vllm/v1/worker/gpu_model_runner.py", ("_prepare_inputs", "prepare_inputs"),
                 ("postprocess", "postprocess_sampled"))


def test_jc3_the_release_it_was_written_for_is_quiet(tmp_path):
    assert _dc006(scan_trees(tmp_path, JC3_VLLM, JC3_CLIENT)) == []


def test_jc3_super_member_the_vllm_bases_lack(tmp_path):
    found = sorted(_dc006(scan_trees(tmp_path, JC3_NEW, JC3_CLIENT)))
    assert [(sev, line) for sev, line, _m in found] == [("error", 8), ("warning", 14)]
    assert "no attribute '_prepare_inputs'" in found[0][2] and "Similar: prepare_inputs" in found[0][2]
    dead = found[1][2]
    assert "no attribute 'postprocess'" in dead and "`NPUModelRunner.postprocess` is a method no client code calls" in dead
    assert "no file of this vLLM calls a method named `postprocess`" in dead


def test_jc3_twin_the_dead_method_is_called_by_the_client(tmp_path):
    client = edited(JC3_CLIENT, RUNNER, ("        return super().execute_model(inputs)\n",
                                         "        self.postprocess(inputs, None)\n        return super().execute_model(inputs)\n"))
    found = {(sev, line) for sev, line, _m in _dc006(scan_trees(tmp_path, JC3_NEW, client))}
    assert ("error", 15) in found  # called: the method runs, and so does its `super().postprocess`


def test_jc3_twin_a_client_base_defines_it(tmp_path):
    client = edited(JC3_CLIENT, RUNNER, ("class NPUModelRunner(GPUModelRunner):",
                                         "class _Prep:\n    def _prepare_inputs(self, s):\n        return s\n\n\n"
                                         "class NPUModelRunner(_Prep, GPUModelRunner):"))
    assert not any(line == 12 for _sev, line, _m in _dc006(scan_trees(tmp_path, JC3_NEW, client)))


def test_jc3_twin_a_mixin_another_class_lists_with_more_bases(tmp_path):
    client = {**JC3_CLIENT, "npu_plug/final.py": "from npu_plug.model_runner import NPUModelRunner\n\n\n"
                                                  "class Other:\n    def _prepare_inputs(self, s):\n        return s\n\n\n"
                                                  "class Final(NPUModelRunner, Other):\n    pass\n"}
    assert not any(line == 8 for _sev, line, _m in _dc006(scan_trees(tmp_path, JC3_NEW, client)))


def test_jc3_twin_a_worker_extension(tmp_path):
    client = {**JC3_CLIENT, "npu_plug/launch.py": "from vllm import LLM\n\n"
                                                   "llm = LLM(model='m', worker_extension_cls='npu_plug.model_runner.NPUModelRunner')\n"}
    vllm = {**JC3_NEW, "vllm/__init__.py": "from vllm.entrypoints.llm import LLM\n",
            "vllm/entrypoints/__init__.py": "", "vllm/entrypoints/llm.py": "class LLM:\n    def __init__(self, model, **kwargs):\n        pass\n"}
    assert not any(line == 8 for _sev, line, _m in _dc006(scan_trees(tmp_path, vllm, client)))


JC4_VLLM, JC4_CLIENT = plugin_shape("JC4")
EVAL = "evalkit/vllm_model.py"
JC4_NEW = edited(edited(JC4_VLLM, "vllm/config.py", ("    max_seq_len_to_capture: int = 8192\n", "")),
                 "vllm/entrypoints/llm.py", ("sampling_params=None, prompt_token_ids=None, use_tqdm=True",
                                             "sampling_params=None, use_tqdm=True"),
                 ("(prompt_token_ids or [])", "(prompts or [])"))


def test_jc4_the_release_it_was_written_for_is_quiet(tmp_path):
    result = scan_trees(tmp_path, JC4_VLLM, JC4_CLIENT)
    assert _errors(result) == [] and result.stats.get("uses_checked", 0) >= 5


def test_jc4_values_built_by_annotated_factories_are_typed(tmp_path):
    result = scan_trees(tmp_path, JC4_NEW, JC4_CLIENT)
    assert sorted(_errors(result)) == [("DC003", EVAL, 26), ("DC006", EVAL, 20)]
    by_line = {f.client.line: f.message for f in result.findings}
    # `LLM.llm_engine` is built by `LLMEngine.from_engine_args(...) -> "LLMEngine"`: its model config is typed
    assert "`ModelConfig` has no attribute 'max_seq_len_to_capture'" in by_line[20]
    # `self.model` holds what `self._create_auto_model(...) -> Optional[LLM]` returns
    assert "unexpected keyword argument 'prompt_token_ids'" in by_line[26]


def test_jc4_twin_a_subclass_overriding_the_factory_method(tmp_path):
    client = edited(JC4_CLIENT, EVAL, ("        return self.model.generate(prompt_token_ids=inputs, use_tqdm=False)\n",
                                       "        return self.model.generate(prompt_token_ids=inputs, use_tqdm=False)\n\n\n"
                                       "class RemoteModel(VLLMModel):\n"
                                       "    def _create_auto_model(self, pretrained: str):\n"
                                       "        return object()\n"))
    assert ("DC003", EVAL, 26) not in _errors(scan_trees(tmp_path, JC4_NEW, client))


def test_jc4_twin_returns_that_disagree_with_the_annotation(tmp_path):
    client = edited(JC4_CLIENT, EVAL, ("            return None\n", "            return RemoteClient()\n"),
                    ("from vllm import LLM\n", "from vllm import LLM\n\n\nclass RemoteClient:\n"
                                              "    def generate(self, **kwargs):\n        return []\n"))
    assert not any(rule == "DC003" for rule, _path, _line in _errors(scan_trees(tmp_path, JC4_NEW, client)))


JC5_VLLM, JC5_CLIENT = plugin_shape("JC5")
QUEUES = "vllm/v1/core/sched/request_queue.py"


def test_jc5_a_queue_a_factory_builds_as_one_of_several_classes(tmp_path):
    found = [(f.rule, f.severity, f.client.line, f.message) for f in scan_trees(tmp_path, JC5_VLLM, JC5_CLIENT).findings]
    assert [(rule, sev, line) for rule, sev, line, _m in found] == [("DC006", "warning", 22)]
    assert "only vllm.v1.core.sched.request_queue.FCFSRequestQueue defines it" in found[0][3]


def test_jc5_twin_a_subclass_that_is_no_deque_keeps_the_error(tmp_path):
    vllm = edited(JC5_VLLM, QUEUES, ("class FCFSRequestQueue(deque, RequestQueue):", "class FCFSRequestQueue(RequestQueue):"))
    assert [(rule, line) for rule, _path, line in _errors(scan_trees(tmp_path, vllm, JC5_CLIENT))] == [("DC006", 22)]


def test_jc5_twin_a_factory_building_one_class_types_the_attribute(tmp_path):
    vllm = edited(JC5_VLLM, QUEUES, ("        return PriorityRequestQueue()\n", "        return FCFSRequestQueue()\n"),
                  ("class FCFSRequestQueue(deque, RequestQueue):", "class FCFSRequestQueue(RequestQueue):"))
    lines = [line for _rule, _path, line in _errors(scan_trees(tmp_path, vllm, JC5_CLIENT))]
    assert 13 in lines and 15 in lines  # one class built: `self.waiting` is typed by the annotation, no deque here


def test_jc3_super_calls_of_the_name_elsewhere_keep_no_override_alive(tmp_path):
    # vllm-omni 0.30.0 at vLLM 0.34.0: three `get_dummy_processor_inputs` overrides, each calling `super()`'s, which
    # 0.34.0 has not; a `super().name` in another class reaches a method of that name only from one below it
    client = {**JC3_CLIENT, "npu_plug/other.py": "from vllm.v1.worker.gpu_model_runner import GPUModelRunner\n\n\n"
                                                  "class OtherRunner(GPUModelRunner):\n"
                                                  "    def postprocess(self, a, b):\n"
                                                  "        return super().postprocess(a, b)\n"}
    found = {(path, line): sev for rule, sev, path, line in (
        (f.rule, f.severity, f.client.path, f.client.line) for f in scan_trees(tmp_path, JC3_NEW, client).findings)
        if rule == "DC006"}
    assert found[(RUNNER, 14)] == "warning" and found[("npu_plug/other.py", 6)] == "warning"
