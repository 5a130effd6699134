"""Shapes of code from real plugins driftcheck was not tuned on, each of which runs and was reported broken.

Each case in tests/fixtures/plugin_shapes/<CASE>/ is a tiny fake vLLM (`vllm_src/`) and a client (`client/`,
with a `main.py` that exercises it) reduced from a false error found in arctic-inference 0.2.0, vllm-spyre
1.10.0, tpu-inference 0.32.0, vllm-omni 0.30.0 or vllm-beam-search-plugin 0.1.5 at the vLLM each declares
(docs/triage/2026-12-01-unseen-plugins.md has the triage, with the plugin lines), and P_ to W_ from trl 1.16.0,
verl 0.9.1, areal 1.0.4, memkv-vllm 1.0.12, vllm-kvblockd 0.1.0 and vllm-kunlun 0.11.1
(docs/triage/2026-12-01-unseen-plugins-3.md), X_ from vllm-rbln 0.12.0, Y_ to AG_ from ms-swift 4.6.0,
vllm-ascend 0.23.0, ai-dynamo 1.6.1 and vllm-tgis-adapter 0.10.0 (docs/triage/2026-12-01-unseen-plugins-4.md), AH_ to AM_
from sabi-mla-vllm 0.2.0, vllm-lens 1.3.0, vllm-hust-vspec 0.14.3, vllm-torchtpu-core 0.29.0 and vllm-df11 0.0.1
(docs/triage/2026-12-02-unseen-plugins-5.md), AN_ to AT_ from vllm-ascend 0.11.0 / 0.13.0 / 0.18.0, vllm-rbln
0.10.4 / 0.11.2.post1, tpu-inference 0.13.3 and eagle-harness 0.1.3 (docs/triage/2026-12-02-unseen-plugins-6.md), AU_ to
AZ_ from verl 0.3.0.post1 / 0.4.1 / 0.5.0, vllm-ascend 0.9.1 / 0.10.0rc1 / 0.10.2rc1, lmcache-vllm 0.6.2.3 and
tpu-inference 0.11.1 / 0.12.0 (batch 7, docs/triage/2026-12-02-unseen-plugins-7.md), BA_ to BD_ from light-vllm-security
1.0.3, vllm-omni 0.14.0 and vllm-rbln 0.11.0 (batch 8, docs/triage/2026-12-02-unseen-plugins-8.md; BA_, a client that
ships modules into vLLM's own package folder, runs from one site folder, as pip installs it), GB_ to GG_ from
vllm-gcu 0.9.2, NeMo-RL 0.7.0, AReaL 0.5.3 and vllm-ascend v0.22.1rc1 taken from GitHub (batch 15,
docs/triage/2026-12-03-github-clients-15.md), HA_ to HC_ from vllm-metax v0.14.0, tt-vllm-plugin (13d3f67) and ChatLearn
v1.0.3 taken from GitHub (batch 16a, docs/triage/2026-12-04-github-clients-16a.md), IA_ to ID_ from xinference 4.1.0
(batch 16b, docs/triage/2026-12-04-unseen-plugins-16b.md), JA_ (open) and JB_ from MindSpeed-RL v2.2.0 / v2.3.0 and
genesis-vllm-patches v12.0.0 taken from GitHub (batch 16c, docs/triage/2026-12-04-github-clients-16c.md; JB fixed since),
KA_ to KD_ from llumnix (39def8d), kvcached v0.1.2 / v0.1.4 / v0.1.5 and LMCache-Ascend v0.4.3 taken from GitHub (batch
17a, docs/triage/2026-12-04-github-clients-17a.md), LA_ from mjolnir-kernel 0.1.0 (batch 17b,
docs/triage/2026-12-04-unseen-plugins-17b.md), NB_ from MInference v0.1.5.post1 / v0.1.6 taken from GitHub (batch
18b, docs/triage/2026-12-04-github-clients-18b.md), RA_ to RE_ (RE open) from afd-plugin (2e4378f, v0.19.1rc1), vllm-ascend
v0.25.1rc1 and zentorch (69c48fa) taken from GitHub (batch 20a, docs/triage/2026-12-04-github-clients-20a.md), TC_ from vllm-ascend 0.23.0 at
vLLM 0.33.0 (batch 20c, docs/triage/2026-12-04-newer-vllm-errors-20c.md), UC_ to UE_ from index-tts 1.0 and MERaLiON2 0.2.0 (the sample of
0.33.0 sweep errors, docs/triage/2026-12-04-sweep-0.33.0-sample-20d.md), XA_ to XC_ from vLLM 0.8.5-0.10.1's own trees
scanned against themselves (the self-scan oracle, batch 21b, docs/triage/2026-12-05-self-scans-old-releases-21b.md), WA_ from wde v0.3.1 taken from GitHub (batch 21a,
docs/triage/2026-12-05-unseen-clients-21a.md; a guard: the names vLLM's own globals() uses write exist), YA_ to YF_ from the
audit of unknowns (batch 21c, docs/triage/2026-12-05-unknowns-21c.md), ZA_ from chattts 0.2.5 (batch 22a,
docs/triage/2026-12-05-unseen-plugins-22a.md), ZI_ to ZK_ from uc-manager-cann900-a3 0.9.0rc3 and tokenspeed-smg (batch 22b,
docs/triage/2026-12-05-unseen-plugins-22b.md), ZR_ to ZV_ from omni-npu (2829161) and ZW_ from omni-infer
(c8bc2bb) taken from GitHub (batch 22c, docs/triage/2026-12-05-github-clients-22c.md), KA1_ from certus-connector
(AI-native-Systems-Research/ai-native-storage-certus) taken from GitHub (batch 23a,
docs/triage/2026-12-05-github-clients-23a.md; the test's own import that a test stand-in covers stays a warning), KB1_
from vllm-ctsd (CarloCetrone/vllm-ctsd, taken from GitHub; batch 23b, docs/triage/2026-12-05-engine-internals-clients-23b.md;
the guard the fix keeps: a callback handed out inside a try under a vLLM version check), KC_ from unsloth 2026.10.9
(batch 23c, docs/triage/2026-12-05-unseen-plugins-23c.md), LA1_ to LA4_ from vllm-ascend (182b75e) at vLLM 0.27.1 and
aibrix's kvcache (e3e10f9) at 0.21.0 taken from GitHub (batch 24a, docs/triage/2026-12-05-vllm-project-heads-24a.md;
LA1_ and LA3_ run pytest's MonkeyPatch and skip outcome), LB1_ and LB2_ from NeMo-RL (7ea279a) and ROLL (8eb27cc) taken
from GitHub (batch 24b, docs/triage/2026-12-05-rl-framework-heads-24b.md), LC1_ from ArcticInference
(snowflakedb/ArcticInference 9d46438) taken from GitHub (batch 24c, docs/triage/2026-12-05-kv-serving-heads-24c.md),
MB1_ to MB3_ (MB3 open; MB2 fixed in the fourth session) from vllm-plugin-FL forks (physics31415926 d1653d9 at vLLM 0.20.2, xmhubj b7d291b at 0.19.0)
taken from GitHub (batch 25b, docs/triage/2026-12-05-plugin-heads-25b.md), OA1_ from the same plugin's forks at newer
HEADs (tonyh168 38e7dbc at 0.20.2, xin2an 2136609 at 0.13.0; batch 27a, docs/triage/2026-12-05-platform-runner-heads-27a.md:
bound methods handed out only under a flag the file only sets false), NC1_ to NC3_ (DC113 not-a-container:
records that are containers after all) and ND1_ to ND4_ (DC114 abstract-method-missing: classes that can be built, or are
never built), NE1_, NE2_ (DC115 unpack-count: what really runs returns what the client unpacks) and NF1_ (DC116 not-callable:
members that hold callables) written with the rules (tests/probes/test_not_a_container.py,
test_abstract_method_missing.py, test_unpack_count.py, test_not_callable.py hold their twins), NB1_ and NB2_
from auto-round's vLLM extension (intel/auto-round b9f3d00) at vLLM 0.33.0 taken from GitHub (batch 26b,
docs/triage/2026-12-05-quant-spec-heads-26b.md), NA1_ from unsloth (015bdef) taken from GitHub
(batch 26a, docs/triage/2026-12-05-eval-finetune-heads-26a.md; a guarded import, a warning that names no other module's
own `logger` as where it went), NA4_ from torchtune (bd2a0fc) at its pin vLLM 0.8.4, NA5_
from NVIDIA-NeMo/Export-Deploy (914daa6) at vLLM 0.24.0, OB1_ from tair-kvcache's vLLM connector (alibaba/tair-kvcache
f6aa2b2) taken from GitHub and OB2_ from kvbm 1.6.1 (batch 27b, docs/triage/2026-12-05-kv-scheduler-heads-27b.md; OB2 a
guarded import whose warning no longer calls a compared string a registration), PA1_ from arctic-inference 0.3.0 (PyPI sdist) at
vLLM 0.33.0 (batch 28a, docs/triage/2026-12-05-pypi-newest-28a.md: patches imported only past a plugin entry point that
raises on every release but its pin, read through a predicate of another module, unless a bypass variable is set;
PA2_ open: the same patches' modules loaded by its BYO server under the environment test that turns the plugin on),
PB1_ from unified-cache-management
(ModelEngine-Group/unified-cache-management cdd4406) at vLLM 0.11.0 taken from GitHub (batch 28b,
docs/triage/2026-12-05-patch-libs-28b.md; the rest of a function after an import probe whose `except` raises) and
PB2_ from MoLink (oldcpple/MoLink f6f77e2) at its pin vLLM 0.11.2 (a DC103 warning: the runner read through the attribute
where the client stores its own single-phase runner) and PB3_ from llumnix-project/llumnix (8a693b4) at vLLM 0.12.0
and 0.18.0 (names its `git format-patch` of a vLLM checkout adds, beside a `.gitignore` change, are unknown), QB1_ from
banana-smasher-plugin (my-other-github-account/banana-smasher d66eb68) at its pin vLLM 0.24.0 (batch 29b,
docs/triage/2026-12-05-extension-plugins-29b.md: a test's import after a helper put a fake vLLM module in
`sys.modules` binds the fake's stub class) and QB2_ from MarinFold's only-correct structured-output backend
(Open-Athena/MarinFold 19f81b6) at vLLM 0.20.1 (the old spelling under `if not patched:` after a try that sets
`patched` once the new spelling worked is that try's fallback),
QA1_ from Kalorda (vlmOCR/Kalorda 4905f1a) at vLLM 0.13.0 taken from GitHub (batch 29a,
docs/triage/2026-12-05-model-plugins-29a.md: a model module a plugin imports only when vLLM's registry lacks the
architecture, which the target's registry lists) and QA2_ from ViLaVT (AntResearchNLP/ViLaVT e5d19bc) at vLLM 0.11.0 (an
old copy of a model in a file whose name no `import` can load, never named by the client, whose top level calls none
of its methods), and QA3_ from avater_voice (feb-co/avater_voice b5c9865) at vLLM 0.8.5 (a subclass of an engine name vLLM
rebinds to its V1 class under an environment test, reading an attribute the V0 class sets), QC1_ from TriAttention's vLLM runtime
(WeianMao/triattention c3744ee) at vLLM 0.24.0 and 0.33.0 (batch 29c,
docs/triage/2026-12-05-research-prototypes-29c.md: a DC109 override vLLM reaches only through a caller that reads its
signature stays a warning; a caller's docstring is no longer taken for that check) and QC2_ from the same runtime
(an override in a class the client only copies methods from onto vLLM's, never built, is a warning), QD1_ from bespokelabs-curator
(bespokelabsai/curator 8f26600) at vLLM 0.13.0 taken from GitHub (batch 29d,
docs/triage/2026-12-05-engine-embedders-29d.md: a method called on what vLLM annotates as a Protocol, whose signature
the real object's need not share), and QD2_ (open) from kaito (kaito-project/kaito 056b828) at its pin vLLM 0.25.1 (a
test's `"kv_connector"` dict for a user's own connector, handed only to an `argparse.Namespace` and to the client's
helper that keeps it; no engine starts), QE1_ to QE5_
from vLLM 0.34.0's own tree scanned against itself (batch 29e, docs/triage/2026-12-05-newest-nightly-29e.md: DC108 on
another class's same-named method and on a property the engine only defines, a module __getattr__ serving a
frozenset of names, a member annotated with a foreign base in one branch, members through a base an `if` imports
from one of two platform modules), SA1_ from cohere-ai/melody (333ae6a, its vLLM parser) at vLLM 0.13.0 taken from
GitHub (batch 30a, docs/triage/2026-12-05-server-extensions-30a.md: a deprecated alias a module __getattr__ serves by
returning the module's own top-level import of another name; a DC009 warning that names the new class and offers no move)
and SA2_ from the same parser at vLLM 0.14.0 (an old name a module __getattr__ with no final raise returns None for:
an unknown that says so), SA3_ from vllm-kubernetes-plugin (MonadKai/vllm-kubernetes-plugin 3302b10) at vLLM 0.10.1 (names
a plugin adds to the table `vllm.envs`' __getattr__ serves, `envs.environment_variables.update(...)`, then reads), SC1_ from Comb (shijuzhao/Comb 25bb508) at vLLM 0.33.0 against its
environment.yml's 0.12.0 (batch 30c, docs/triage/2026-12-05-multimodal-pooling-30c.md: a DC109 call site in a method vLLM
reaches for the client's object only from an `apply` the client replaces without super()), SD1_ from ArcticInference (snowflakedb/ArcticInference) and vllm-plugin-FL at vLLM
0.34.0 (batch 30d, docs/triage/2026-12-05-sweep-0.34.0-sample-30d.md: a DC109 override vLLM calls only from a classmethod that it calls on
classes its own selectors pick, never through the client's class, is a warning), SB2_ from DeepSpec's hidden-states connector (xlm-research/DeepSpec 589c8b8, read through the file
index) at vLLM 0.19.1 and 0.23.0 (batch 30b, docs/triage/2026-12-05-spec-decode-30b.md: a private override of a method
that the target's vLLM base neither defines nor calls, and that no client code names elsewhere, never runs),
TK1_-TK8_ from vLLM's own tests/ of the 0.16.0, 0.24.0, 0.32.0 and 0.33.0 sdists scanned against their own release
(docs/triage/2026-12-05-vllm-own-tests-tk.md: a test's `vllm serve` list only inspected, `pytest.raises` and
`contextlib.suppress` bodies, a class a test replaces by its dotted path, members set on an instance built with
`object.__new__`, an `f"{__name__}.X"` worker extension, a stub stored then read in one function, a helper annotated
with one class that returns a sibling, a class a test function defines over an imported name),
VA1_ from exo's KV extraction script (exo-explore/exo refs/pull/2006 29670fd and leo/prefill-decode-really 9ec9725)
at vLLM 0.16.0 and 0.19.1 (batch 32a, docs/triage/2026-12-05-kv-connectors-32a.md: a `kv_connector` name the release's
factory lacks, in a file that first rebinds the factory method the name is looked up in) and VA2_ from vllm-omni's PD
branch (ahengljh/vllm-omni feat/pd-disaggregation bcfad32) at vLLM 0.16.0 (`execute_model` handed
`SchedulerOutput.make_empty()`, for which the runner returns before it keeps any state),
TH1_ and TH2_ from vLLM-metax's 0.8.5 plugin (lianjiezh/vLLM-metax 652e9f0) at vLLM 0.8.5 taken from GitHub (batch 31c,
docs/triage/2026-12-05-old-internals-31c.md: an imported vLLM module name rebound at top level to a logger; vLLM's
environment table rebound to a merge with the plugin's own variables), and TH3_ from the same plugin (9b0ed3a) at vLLM 0.9.1
(its own copies of vLLM modules that its install helper copies onto the installed vLLM folder by a path join),
TG1_ to TG3_ from FAndromedA/vllm_for_sp2 (2131526, its MoBA attention layer) at vLLM 0.20.2 against its 0.17.1
(batch 31b, docs/triage/2026-12-05-attention-backends-31b.md: a same-named kernel launcher whose signature rejects the
client's call is no new home for the wrapper it imported; a keyword the call's positional arguments also reach once a
parameter before it was removed, said as such; a package of the client's tree that imports no vLLM is its own, not an
unread plugin that may set members on what vLLM hands out), TF1_ from
genlm-backend's vLLM backend (genlm/genlm-backend, the ControlSampler version of genlm/backend/llm/vllm.py, read through
the file index) at vLLM 0.26.0 and 0.11.0 (batch 31a, docs/triage/2026-12-05-sampling-lora-31a.md: a `Sampler` subclass
and a helper defined under a module-level `if` after a guarded import, which are now read; a name both branches of a
split define, and a class under `if TYPE_CHECKING:`, are not) and TF2_ (written with it: what sits in a try body below an
import the release lacks never runs, the `except` taking over; a plain statement there was an error before) and TF3_
(an `except ImportError:` whose try body only imports what the release has never runs: its statements were errors),
TJ1_ to TJ3_ from vLLM 0.13.0-0.34.0's own trees scanned against themselves (batch 31d,
docs/triage/2026-12-05-self-scans-31d.md: a function stored on a class of a package vLLM itself requires has no vLLM
`self` for DC008; a submodule a package `__init__` binds by `from . import name` resolves to the submodule, not round
its own binding; a parameter named like a module-level function, stored on an object, is not that function),
TL1_ from
vLLM 0.28.0's own tests as a client (batch 31e, docs/triage/2026-12-05-vllm-own-tests-31e.md: a submodule a package's
`__init__` binds by `from . import ops`, no import cycle) and TL2_ from vLLM 0.13.0's and 0.30.0's own tests (a store of a
member vLLM reads by its name, `getattr(layer, "is_bmm", False)`, or sets on its torch modules from outside the class,
is no new attribute vLLM never reads) and TL3_ from 0.28.0's (an unknown member of a class whose base vLLM binds to what
`make_adapters(...)` returns names that binding) and TL4_ from 0.13.0's and 0.30.0's (unittest.mock's own members used on a
vLLM member a test filled with a mock are unknown in a file that makes mocks),
VC1_ from async-grpo-nccl (engineerA314/async-grpo-nccl 6d74c19) taken from GitHub (batch 32c,
docs/triage/2026-12-05-rl-integrations-32c.md: `self.collective_rpc(...)` in a client subclass of vLLM's `Executor`
whose own `collective_rpc` sends to the client's workers and never calls vLLM's), VB1_ from
sophgo/vllm-tpu (9b474f2, the Sophon TPU platform plugin) at vLLM 0.11.0 (batch 32b,
docs/triage/2026-12-05-platform-worker-plugins-32b.md: a member only some of vLLM's subclasses define, read on a value
annotated with their marker base where the platform's own metadata class of that kind defines it, is unknown) and VB2_
from belonghim/vllm-openvino (5465967) at its pin vLLM 0.13.0 (a runner call on `self.model_runner` in a function
nested in a method of the worker class whose own body stores only its single-phase runner there is no DC103 site), and
VB3_ written with the fix of a missed error in localweights/vllm-gguf-plugin (f89d519) at vLLM 0.34.0 (a backport's import
after `if getattr(Cls, name, None): return` stays guarded when the file stores the probed name; a probe of the file's own
`= True` done-flag guards nothing), and WC1_ from vllm-kunlun 0.11.1 at vLLM 0.11.1 (batch 33c,
docs/triage/2026-12-05-pypi-plugins-33c.md: a name the platform plugin sets on the `SimpleNamespace` it puts into
`sys.modules["vllm.utils"]` is that module's from then on, a warning as a name set on the module itself is) and WC2_
from the same scan (`self.execute_model(...)` in a client runner base whose own client subclass defines execute_model,
with no two-phase vLLM runner anywhere in the family, reaches the client's single-phase method: no DC103),
WA1_ from a speculative-decoding trace script (an `AsyncLLM` user, index file
70321455950, read through the file index) at vLLM 0.15.0 and 0.16.0 against 0.14.0 (batch 33a,
docs/triage/2026-12-05-server-async-33a.md: an `await` of a method under a test of whether that method is a coroutine
function, `await e.get_tokenizer() if asyncio.iscoroutinefunction(e.get_tokenizer) else e.get_tokenizer()`) and WA2_
(written with it: the same switch's other spellings, the rest of a block after an `if` on that test whose body exits,
and the method tested through a local name bound to it), and WA3_ written with the fix of a missed error in
gpt_server (shell-nlp/gpt_server 1d266b0) at vLLM 0.18.0 and later (a client subclass of a vLLM class that adds only
methods is built through vLLM's constructor, now checked; the shape keeps clean such a subclass built right, one with
its own `__init__` and a dataclass subclass adding a field).
FB1_ from turboquant-vllm's smoke scripts (the wkin-t fork, 40c51f2) at vLLM 0.19.0, 0.24.0 and 0.34.0 (batch 34b,
docs/triage/2026-12-05-oot-kernels-quant-34b.md: vLLM imported below a module-level `sys.path.insert(0, ...)` of a
checkout outside the client is the one in that folder wherever it exists; the shape's main.py puts the checkout
there first) and FB2_ from tilelang-turboquant (Sasopsy/turboquant-vllm cbef9b2) at 0.20.0-0.34.0 (a client config
that derives from `QuantizationConfig` through the client's own base is no sibling "that does not derive from it")
and FB3_ from vllm-fp8kv (nickus/vllm-fp8kv 6746463) at 0.25.0 and 0.28.0 (modules its `setup.sh` copies into the
installed vLLM folder from a pull request's checkout; `installed_together`, so the copy lands in the test's site folder).
NG1_ to NG3_ from rdna4-vllm (patcarter883/rdna4-vllm 81712c3) at vLLM 0.22.0 and DS4_SM120_Flash_VLLM_Experiment
(phaelon74 70b612d) at 0.33.0 (batch 19a, docs/triage/2026-12-06-unseen-github-19a.md: an overlay folder of new files only
that its Dockerfile copies over vLLM's folder; a module a Dockerfile's `install -D` puts into vLLM's package folder; a
name a Python script inserts into a vLLM module's text; tests/scan/test_batch_19a.py holds their twins).
NH1_ from vllm-windows-build (aivrar/vllm-windows-build ec866e6) at vLLM 0.25.1, 0.26.0 and 0.33.0 (batch 19b,
docs/triage/2026-12-06-build-time-patchers-19b.md: a flat folder of copies of one vLLM package's files that import each
other by vLLM's names, dropped into that package; tests/scan/test_batch_19b.py holds its twins).
FE1_ from tenstorrent/vllm-tt-plugin (e3fc849) at vLLM 0.25.1, 0.28.0 and 0.34.0 (batch 34e,
docs/triage/2026-12-05-metrics-executors-34e.md: a module whose name the platform hands to a hook of vLLM's
`ParallelConfig` only past `if not hasattr(parallel_config, "engine_core_launcher_cls"): raise`, where the target's
class lacks it, and that a test imports only inside a try catching ImportError and another test only compares) and FE2_
from the same plugin's `compat/vllm-0.24.0` tag at vLLM 0.24.0 (the name stored with no test into that attribute,
which the target's vLLM neither has nor reads).
FA1_ from numindai/vLLM-Last-Hidden-State (read
through the file index, the newest stored version of each file) at vLLM 0.29.0 (batch 34a,
docs/triage/2026-12-05-hidden-state-clients-34a.md: a worker extension named by the `--worker-extension-cls` serve flag
in an argument list a launcher that imports no vLLM hands to `python -m vllm.entrypoints.cli.main serve`) and FA2_ from
wangyichao1999/Speculator_Train_For_Multimodal (338cf79) at vLLM 0.16.0 (a worker extension named by its import name,
`pkg.mod.Cls`, in a project whose files are under `src/`: read from `src/pkg/mod.py`, no longer an unknown).
FC2_ written with the fix of a missed error in auralis
0.2.8.post2 at vLLM 0.8.5 (batch 34c, docs/triage/2026-12-05-oot-models-multimodal-34c.md: the members of an object a
vLLM module builds once at import, `MULTIMODAL_REGISTRY = MultiModalRegistry()`, are now checked; the shape keeps clean
such registries used right, a name built by a function, one a function of its module rebinds through `global`, and an
object the client installs in the place of one).
FD1_ from the LoD-attention plugin of SmerkyG/KVM-paper (integrations/vllm_lod, read through the file index) at vLLM
0.30.0-0.32.0 (batch 34d, docs/triage/2026-12-05-newest-internals-34d.md: a call inside a function the client installs
on a vLLM module in place of vLLM's own, which vLLM's engine calls after its own set-up, is no DC108 error).
MB3_ (batch 25b, vllm-plugin-FL's `FusedMoEFL.select_experts` at vLLM 0.19.0) is closed by the orphaned-override check
(DC117): a case's `baseline_src/`, where it has one, is the vLLM the client was written for (`--client-vllm`).
Two checks per case: Python runs the client against the fake vLLM (so the code really works; a case whose fake
vLLM imports a third-party package, AQ's pydantic, runs on an interpreter that has it), and driftcheck reports no
error for it.
Cases whose cause is still open are strict xfails (OPEN): fixing one makes its test pass and the xfail fail.
"""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from driftcheck.scan.pipeline import ScanOptions, scan
from driftcheck.sources.targets import resolve_client, resolve_vllm

CASES = Path(__file__).resolve().parent.parent / "fixtures" / "plugin_shapes"

OPEN = {  # case -> the cause not fixed yet
    "JA_member_a_co_imported_plugin_patches_onto_a_vllm_class": "a member a co-imported platform plugin that driftcheck does not read (vllm_ascend) patches onto a vLLM class",
    "RE_patch_reached_only_past_an_entry_point_refusing_unsupported_releases": "code reached only from a plugin entry point after it returns on releases its version map lacks (and through a patch class a version-range class decorator wraps), across files",
    "PA2_module_loaded_by_a_server_only_when_the_env_enabling_a_refusing_plugin_is_set": "a module a server loads only under the environment test that also turns on a general plugin which refuses the release (vLLM loads that plugin first)",
}


def _cases() -> list:
    out = []
    for case in sorted(p.name for p in CASES.iterdir() if p.is_dir()):
        marks = [pytest.mark.xfail(strict=True, reason=OPEN[case])] if case in OPEN else []
        out.append(pytest.param(case, marks=marks, id=case))
    return out


def _third_party(case: Path) -> set[str]:
    """Top-level packages the case's files import that are neither the standard library nor the case's own."""
    own = {p.name.removesuffix(".py") for d in ("vllm_src", "client") for p in (case / d).iterdir()}
    out: set[str] = set()
    for path in case.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                out |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                out.add(node.module.split(".")[0])
    return {m for m in out if m not in own and m not in sys.stdlib_module_names}


def _interpreter(needs: set[str]) -> str | None:
    for exe in dict.fromkeys([sys.executable, shutil.which("python3")]):
        if exe and all(subprocess.run([exe, "-c", f"import {m}"], capture_output=True).returncode == 0 for m in needs):
            return exe
    return None


def _search_path(root: Path, site: Path) -> list[Path]:
    """Where the case's modules come from: vllm_src/ then client/, or, for a case marked `installed_together` (a
    client that ships files into vLLM's own package folder), one site folder holding vllm_src/ and then client/
    copied over it, as pip installs two wheels that share a package folder."""
    if not (root / "installed_together").is_file():
        return [root / "vllm_src", root / "client"]
    for part in ("vllm_src", "client"):
        shutil.copytree(root / part, site, dirs_exist_ok=True)
    return [site]


@pytest.mark.parametrize("case", sorted(p.name for p in CASES.iterdir() if p.is_dir()))
def test_every_case_runs_in_python(case, tmp_path):
    root = CASES / case
    needs = _third_party(root)
    exe = _interpreter(needs)
    if exe is None:
        pytest.skip(f"no interpreter here has {sorted(needs)}")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(str(p) for p in _search_path(root, tmp_path / "site"))}
    done = subprocess.run([exe, "main.py"], cwd=root / "client", env=env, capture_output=True, text=True)
    assert done.returncode == 0, f"{case}: {done.stderr[-400:]}"


@pytest.mark.parametrize("case", _cases())
def test_no_error_on_code_that_runs(case, tmp_path):
    root = CASES / case
    own = root / "baseline_src"  # the vLLM the client was written for, where the case needs one
    result = scan(resolve_vllm(str(root / "vllm_src"), tmp_path), [resolve_client(str(root / "client"), tmp_path)],
                  ScanOptions(cache_dir=tmp_path, use_cache=False, client_vllm=str(own) if own.is_dir() else None))
    assert result.internal_errors == []
    errors = [f"{f.rule} {f.client.path}:{f.client.line} {f.message[:120]}" for f in result.findings if f.severity == "error"]
    assert errors == []
