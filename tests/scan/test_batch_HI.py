"""Batch HI (recall from issue threads: breakages plugins hit on a newer vLLM, scanned before their fix;
docs/triage/2026-12-06-recall-from-issues-HI.md).

HI1: lm-eval 0.4.11's `lm_eval/models/vllm_causallms.py:40-41` imports `resolve_hf_chat_template` from
`vllm.entrypoints.chat_utils` under `if parse_version(version("vllm")) >= parse_version("0.8.3"):`; vLLM 0.22 moved it
to `vllm.renderers.hf` and every harness run failed with ImportError (vllm-project/vllm-ascend#10595). DC002 called
the import "under a vLLM version check, so the client handles it": a warning. A version test the target's release
decides is no guard for the branch the release takes: that branch is the code that runs there. Now the taken branch
(the body of a test that holds, the `else` of one that fails, and what follows an early exit that does not leave)
is unguarded; the untaken branch, and a test the release cannot decide, stay guarded (twins).

HI2: vllm-spyre 0.5.3's `Pooler.from_config_with_defaults(...)` (vLLM 0.10.0 moved it to ResolvedPoolingConfig;
sendnn-inference#336) and vllm-ascend 0.18.0's `RequestStatus.WAITING_FOR_FSM` (renamed by vLLM 0.19.0;
vllm-ascend#8355) read a member off the vLLM class object itself, which no rule looked up: DC006 checked instances,
modules, `self` and `super()` only. A member the class, its bases, the subclasses it may stand for and the client's
patches all lack is now a DC006 error; a dunder or underscored name, what `type` gives every class, a member of a
base driftcheck does not read, a name the file binds twice and a client patch of the member stay quiet (twins).
"""

from __future__ import annotations

import pytest

from scan.helpers import edited, plugin_shape, scan_trees

HI1_VLLM, HI1_CLIENT = plugin_shape("HI1")
HARNESS = "pkg/harness.py"
# vLLM 0.22's change: `resolve_hf_chat_template` leaves `vllm.entrypoints.chat_utils`
HI1_MOVED = edited(HI1_VLLM, "vllm/entrypoints/chat_utils.py", (
    'def resolve_hf_chat_template(template):\n    """vLLM 0.22 moved this to vllm.renderers.hf (the tests take it out here)."""\n'
    '    return validate_chat_template(template)\n', ""))
IMPORT = 'if parse_version(version("vllm")) >= parse_version("0.8.3"):\n    from vllm.entrypoints.chat_utils import resolve_hf_chat_template\n'


def _hi1(tmp_path, client, version="0.22.0", vllm=None):
    result = scan_trees(tmp_path, vllm or HI1_MOVED, client, version=version)
    return [(f.rule, f.severity, f.client.line) for f in result.findings
            if f.client.path == HARNESS and f.rule == "DC002"]


def test_hi1_the_shape_is_quiet_where_vllm_has_the_name(tmp_path):
    assert _hi1(tmp_path, HI1_CLIENT, vllm=HI1_VLLM) == []


def test_hi1_import_in_the_branch_the_release_takes_is_an_error(tmp_path):
    assert _hi1(tmp_path, HI1_CLIENT) == [("DC002", "error", 8)]


def test_hi1_on_a_release_the_test_rejects_the_import_is_not_an_error(tmp_path):
    # the same client on a vLLM older than the bound: the branch does not run there
    assert ("DC002", "error", 8) not in _hi1(tmp_path, HI1_CLIENT, version="0.8.0")


@pytest.mark.parametrize("new, expected", [
    # the branch the release does not take: guarded as before
    ('if parse_version(version("vllm")) < parse_version("0.8.3"):\n'
     '    from vllm.entrypoints.chat_utils import resolve_hf_chat_template\n', "warning"),
    # a bound driftcheck cannot read: undecided, guarded as before
    ('import os\nif parse_version(version("vllm")) >= parse_version(os.environ["MIN_VLLM"]):\n'
     '    from vllm.entrypoints.chat_utils import resolve_hf_chat_template\n', "warning"),
    # the `else` of a test the release fails runs there
    ('if parse_version(version("vllm")) < parse_version("0.8.3"):\n'
     '    from vllm.entrypoints.chat_utils import load_chat_template as resolve_hf_chat_template\n'
     'else:\n    from vllm.entrypoints.chat_utils import resolve_hf_chat_template\n', "error"),
    # a module-level name bound to the parsed version
    ('VLLM_VERSION = parse_version(version("vllm"))\nif VLLM_VERSION >= parse_version("0.8.3"):\n'
     '    from vllm.entrypoints.chat_utils import resolve_hf_chat_template\n', "error"),
])
def test_hi1_twins(tmp_path, new, expected):
    client = edited(HI1_CLIENT, HARNESS, (IMPORT, new))
    found = [sev for rule, sev, _line in _hi1(tmp_path, client)]
    assert found == [expected]


@pytest.mark.parametrize("op, expected", [("<", "error"), (">=", "warning")])
def test_hi1_early_exit_on_a_decided_test(tmp_path, op, expected):
    # `if <test>: return` then the import: the rest runs on the release unless the test holds there
    new = (f'def resolve(path):\n    if parse_version(version("vllm")) {op} parse_version("0.8.3"):\n        return None\n'
           '    from vllm.entrypoints.chat_utils import resolve_hf_chat_template\n'
           '    return resolve_hf_chat_template(path)\n')
    client = edited(HI1_CLIENT, HARNESS, (IMPORT, new))
    assert [sev for _rule, sev, _line in _hi1(tmp_path, client)] == [expected]


HI2_VLLM_OLD, HI2_CLIENT = plugin_shape("HI2")
RUNNER = "pkg/runner.py"
# vLLM 0.10.0 and 0.19.0's changes: `Pooler.from_config_with_defaults` gone, `WAITING_FOR_FSM` renamed
HI2_VLLM = edited(edited(HI2_VLLM_OLD, "vllm/pooler.py", (
    "    @classmethod\n    def from_config_with_defaults(cls, pooler_config, pooling_type=PoolingType.LAST):\n"
    "        return cls(pooling_type)\n\n", "")),
    "vllm/v1/request.py", ("    WAITING_FOR_FSM = enum.auto()", "    WAITING_FOR_STRUCTURED_OUTPUT_GRAMMAR = enum.auto()"))
POOLER = "Pooler.from_config_with_defaults(\n            model_config.pooler_config, pooling_type=PoolingType.CLS)"
STATUS = "RequestStatus.WAITING_FOR_FSM"


def _hi2(tmp_path, client):
    result = scan_trees(tmp_path, HI2_VLLM, client, version="0.20.0")
    return [(f.rule, f.severity, f.client.line) for f in result.findings
            if f.client.path == RUNNER and f.severity in ("error", "warning")]


def test_hi2_the_shape_is_quiet_where_vllm_has_the_members(tmp_path):
    result = scan_trees(tmp_path, HI2_VLLM_OLD, HI2_CLIENT, version="0.18.0")
    assert [f for f in result.findings if f.client.path == RUNNER] == []


def test_hi2_members_the_vllm_classes_lack_are_errors(tmp_path):
    result = scan_trees(tmp_path, HI2_VLLM, HI2_CLIENT, version="0.20.0")
    found = [f for f in result.findings if f.client.path == RUNNER]
    assert [(f.rule, f.severity, f.client.line) for f in found] == [("DC006", "error", 9), ("DC006", "error", 14)]
    assert "`Pooler` has no attribute 'from_config_with_defaults'" in found[0].message
    assert "`RequestStatus` has no attribute 'WAITING_FOR_FSM'" in found[1].message


@pytest.mark.parametrize("old, new", [
    (POOLER, "Pooler.for_embed(model_config.pooler_config)"),  # a classmethod it has
    (STATUS, "RequestStatus.WAITING_FOR_STRUCTURED_OUTPUT_GRAMMAR"),  # an enum member it has
    (POOLER, "Pooler.__name__"),  # a dunder every class has
    (POOLER, "Pooler.mro()"),  # what `type` gives every class
    (STATUS, "RequestStatus._member_map_"),  # the enum machinery's own members
])
def test_hi2_members_the_class_has_stay_quiet(tmp_path, old, new):
    client = edited(HI2_CLIENT, RUNNER, (old, new))
    assert _hi2(tmp_path, client) == [("DC006", "error", 13 if old == POOLER else 9)]  # (POOLER spans two lines)


def test_hi2_a_name_bound_twice_stays_quiet(tmp_path):
    # `Pooler` is vLLM's class or None, whichever binding ran: not certainly the class
    client = edited(HI2_CLIENT, RUNNER, ("from vllm.pooler import Pooler, PoolingType\n",
                                         "from vllm.pooler import PoolingType\ntry:\n    from vllm.pooler import Pooler\n"
                                         "except ImportError:\n    Pooler = None\n"))
    assert [x for x in _hi2(tmp_path, client) if x[0] == "DC006"] == [("DC006", "error", 18)]


def test_hi2_a_member_the_client_patches_onto_the_class_stays_quiet(tmp_path):
    client = {**HI2_CLIENT, "pkg/__init__.py": "from vllm.pooler import Pooler\n\n\n"
              "def _defaults(cls, config, pooling_type=None):\n    return cls()\n\n\n"
              "Pooler.from_config_with_defaults = classmethod(_defaults)\n"}
    assert [x for x in _hi2(tmp_path, client) if x[2] == 9] == []


def test_hi2_a_hasattr_test_makes_it_a_warning(tmp_path):
    client = edited(HI2_CLIENT, RUNNER, ("        self.pooler = Pooler", "        if hasattr(Pooler, 'from_config_with_defaults'):\n"
                                                                     "            self.pooler = Pooler"))
    assert [x for x in _hi2(tmp_path, client) if x[2] == 10] == [("DC006", "warning", 10)]


def test_hi2_a_class_parameter_may_be_a_subclass_that_has_it(tmp_path):
    # `cls: type[Pooler]` may hold vLLM's DispatchPooler, which defines `for_dispatch`
    client = {**HI2_CLIENT, "pkg/make.py": "from vllm.pooler import Pooler\n\n\n"
              "def make(cls: type[Pooler]):\n    return cls.for_dispatch([])\n"}
    result = scan_trees(tmp_path, HI2_VLLM, client, version="0.20.0")
    assert [f for f in result.findings if f.client.path == "pkg/make.py" and f.severity == "error"] == []


FALLBACK = ("def make_pooler(config):\n    try:\n        from vllm.pooler import {name}\n"
            "        return {name}.from_config_with_defaults(config)\n"
            "    except ImportError:  # an older vLLM\n        return Pooler.from_config_with_defaults(config)\n")


@pytest.mark.parametrize("name, expected", [
    ("ResolvedPoolingConfig", "warning"),  # the try body works on this vLLM: the fallback is another release's code
    # the try body's import fails here, so the fallback runs: an error, but DC002 (a per-file rule) finds that failure
    # and DC006 (a whole-client rule) is guarded in another unit, which does not see it (`units.py`'s `failing`)
    pytest.param("GonePoolingConfig", "error", marks=pytest.mark.xfail(strict=True, reason="cross-unit failing")),
])
def test_hi2_in_an_import_fallback(tmp_path, name, expected):
    client = {**HI2_CLIENT, "pkg/fallback.py": "from vllm.pooler import Pooler\n\n\n" + FALLBACK.format(name=name)}
    result = scan_trees(tmp_path, HI2_VLLM, client, version="0.20.0")
    found = [(f.rule, f.severity) for f in result.findings if f.client.path == "pkg/fallback.py" and f.client.line == 9]
    assert found == [("DC006", expected)]


def test_hi2_a_class_that_registers_members_by_a_computed_name_stays_quiet(tmp_path):
    # vLLM 0.32.0's `AttentionBackendEnum.register(name, path)` sets `setattr(cls, name, member)`: tpu-inference's tests
    # register "FAKE" and read `AttentionBackendEnum.FAKE` (a false error this session's own rescan found)
    vllm = edited(HI2_VLLM, "vllm/v1/request.py", ("    RUNNING = enum.auto()\n",
                                                   "    RUNNING = enum.auto()\n\n    @classmethod\n"
                                                   "    def register(cls, name: str, value: int):\n"
                                                   "        member = int.__new__(cls, value)\n"
                                                   "        setattr(cls, name, member)\n"
                                                   "        return member\n"))
    assert _hi2(tmp_path, HI2_CLIENT) == [("DC006", "error", 9), ("DC006", "error", 14)]
    assert ("DC006", "error", 14) not in [(f.rule, f.severity, f.client.line) for f in scan_trees(
        tmp_path / "registers", vllm, HI2_CLIENT, version="0.20.0").findings if f.client.path == RUNNER]


def test_hi2_a_member_the_client_makes_with_a_call_stays_quiet(tmp_path):
    # vllm-omni 0.30.0's patch.py: `extend_enum(RequestStatus, "WAITING_FOR_CHUNK", -1)` (aenum) adds the member its
    # schedulers read; a `hasattr(RequestStatus, "...")` probe makes nothing (the warning test above)
    client = {**HI2_CLIENT, "pkg/patch.py": "from aenum import extend_enum\n\nfrom vllm.v1.request import RequestStatus\n\n"
                                            "extend_enum(RequestStatus, \"WAITING_FOR_FSM\", 99)\n"}
    assert _hi2(tmp_path, client) == [("DC006", "error", 9)]
