"""DC103 two-phase-execution: `execute_model()` without `sample_tokens()`.

From vLLM 0.11.1 (0.12 on the CPU wheels) the model runner's `execute_model` stores its state and
returns None; `sample_tokens()` must be called before the next `execute_model`, else the second
step fails with `RuntimeError: State error: sample_tokens() must be called after execute_model()
returns None.` The runner does this whether or not async scheduling is on, so setting
`async_scheduling=False` (what the seed tried) does not help; the CPU platform already forces async
scheduling off and the error still comes on the second step.

The probe reads the target: the executor must define `sample_tokens` and the runner must raise the
state error. It flags every client function that calls `execute_model` on an executor or worker
without calling `sample_tokens`. Fix: `call-sample-tokens`.
"""

from __future__ import annotations

import ast
import re

from driftcheck.vllm_model import bodies
from driftcheck.astnodes import nodes_of, nodes_within, within
from driftcheck.rules.context import ScanContext
from driftcheck.vllm_model.facts import (
    SCHEDULER_OUTPUT, STATE_ERROR, empty_output_returns_early, has_sample_tokens, two_phase_state_error,
)
from driftcheck.rules.findings import Rule
from driftcheck.client_model.uses import loc_of
from driftcheck.client_model.client_classes import client_ancestry, vllm_bases_through
from driftcheck.vllm_model.resolved import Resolved
from driftcheck.rules.tbsigs import Signature

RULE = Rule("DC103", "two-phase-execution", "execute_model() called without sample_tokens()", "error",
            fix="call-sample-tokens", kind="behaviour", raises=("RuntimeError",))

def _calls_named(tree: ast.AST, name: str) -> list[ast.Call]:
    return [n for n in nodes_of(tree, ast.Call) if isinstance(n.func, ast.Attribute) and n.func.attr == name]


def _client_runner_built(ctx: ScanContext, fn: ast.AST, call: ast.Call) -> bool:
    """`worker = TPUWorker(...); worker.execute_model(...)` where the client's own class defines execute_model:
    that class decides the protocol, not vLLM's runner."""
    recv = call.func.value
    if not isinstance(recv, ast.Name):
        return False
    own = {label.rsplit(".", 1)[-1] for label, (members, _bases) in ctx.usage.client_class_table.items()
           if "execute_model" in members}
    for node in nodes_of(fn, ast.Assign):
        if any(isinstance(t, ast.Name) and t.id == recv.id for t in node.targets) and isinstance(node.value, ast.Call):
            name = node.value.func.id if isinstance(node.value.func, ast.Name) else getattr(node.value.func, "attr", None)
            if name in own:
                return True
    return False


def _own_method(tree: ast.AST, fn: ast.AST, call: ast.Call) -> bool:
    """`self.execute_model(...)` (or `super().execute_model(...)`) inside a class that defines execute_model itself:
    the client is the model runner, which manages its own execute/sample state, or a pass-through override whose
    caller (vLLM's worker) calls sample_tokens next; the rule is about code that drives a runner."""
    recv = call.func.value
    is_super = isinstance(recv, ast.Call) and isinstance(recv.func, ast.Name) and recv.func.id == "super"
    if not is_super and not (isinstance(recv, ast.Name) and recv.id == "self") and \
            not (isinstance(recv, ast.Attribute) and isinstance(recv.value, ast.Name) and recv.value.id == "self"):
        return False  # `self.execute_model(...)` or `self.model_runner.execute_model(...)` inside the component
    for cls in nodes_of(tree, ast.ClassDef):
        if fn in cls.body:
            # the class exposes the two-phase protocol itself (a runner, or a worker delegating to its runner):
            # its own caller calls sample_tokens on it
            return any(isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and s.name in ("execute_model", "sample_tokens")
                       for s in cls.body)
    return False


def _client_runner_stored(ctx: ScanContext, call: ast.Call) -> str | None:
    """`self.model_executor.driver_worker.model_runner.execute_model(...)` where the client stores a runner of its own
    class under that attribute name (`self.model_runner = MolinkGPUModelRunner(...)`, MoLink's V0 worker) and that
    class derives from no vLLM class defining sample_tokens: the object may be that runner, whose protocol is not
    the two-phase one. Its `file:line class` (None: no such store)."""
    recv = call.func.value
    if not isinstance(recv, ast.Attribute):
        return None
    own = {label.rsplit(".", 1)[-1]: label for label in ctx.usage.client_class_table}
    for file in ctx.usage.files:
        for node in nodes_of(file.tree, ast.Assign, ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            value = node.value
            if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in own) or \
                    not any(isinstance(t, ast.Attribute) and t.attr == recv.attr for t in targets):
                continue
            bases = vllm_bases_through(ctx.usage, ctx.api, [own[value.func.id]])
            if not _two_phase(ctx, bases):
                return f"{file.rel}:{node.lineno} {value.func.id}"
    return None


def _own_runner_on_self(ctx: ScanContext, file, call: ast.Call) -> bool:
    """`self.model_runner.execute_model(...)` in a client class (a method, or a function nested in one: the OpenVINO
    worker profiles through `def model_profile_run():` inside its method) whose own body stores under that attribute
    only the client's own runners, of classes deriving from no vLLM class that defines sample_tokens, where no vLLM
    base of the class declares the attribute as a runner that has sample_tokens: the receiver is that runner, whose
    protocol is not the two-phase one, so the call is the client's own business (VB2). A store of anything else there,
    or a vLLM base declaring a two-phase runner (vLLM's GPU worker builds its own in `init_device`), keeps the finding."""
    recv = call.func.value
    if not (isinstance(recv, ast.Attribute) and isinstance(recv.value, ast.Name) and recv.value.id == "self"):
        return False
    around = [c for c in nodes_of(file.tree, ast.ClassDef) if c.lineno <= call.lineno <= (c.end_lineno or c.lineno)]
    if not around:
        return False
    cls = max(around, key=lambda c: c.lineno)  # the innermost class: its `self`
    own = {label.rsplit(".", 1)[-1]: label for label in ctx.usage.client_class_table}
    stores = [node.value for node in nodes_within(file.tree, cls, ast.Assign, ast.AnnAssign)
              if any(isinstance(t, ast.Attribute) and t.attr == recv.attr and isinstance(t.value, ast.Name)
                     and t.value.id == "self" for t in (node.targets if isinstance(node, ast.Assign) else [node.target]))]
    if not stores:
        return False
    for value in stores:
        if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in own):
            return False
        if _two_phase(ctx, vllm_bases_through(ctx.usage, ctx.api, [own[value.func.id]])):
            return False
    for base in vllm_bases_through(ctx.usage, ctx.api, [f"{file.module}.{cls.name}"]):
        member = ctx.api.class_member(base, recv.attr)
        if isinstance(member, Resolved) and member.kind == "attribute" and _two_phase(ctx, ctx.api.possible_types(member)):
            return False
    return True


def _own_family_runner(ctx: ScanContext, file, call: ast.Call) -> bool:
    """`self.execute_model(...)` in a method of a client class that does not define execute_model itself, where a client
    class of its family (the class's client ancestors and the client classes deriving from it, in any file) defines it
    and no class of that family derives from a vLLM class that defines sample_tokens (WC2: vllm-kunlun 0.11.1's V0
    `GPUModelRunnerBase._dummy_run` calls `self.execute_model(...)`, which its own subclass `ModelRunner` defines; the
    base derives from V0's `ModelRunnerBase`): whatever `self` is, its execute_model is the client's, which keeps no
    two-phase state. A family member with a two-phase vLLM base (a mixin later combined with vLLM's GPUModelRunner), or
    no client definition of execute_model at all, keeps the finding."""
    recv = call.func.value
    if not (isinstance(recv, ast.Name) and recv.id == "self"):
        return False
    around = [c for c in nodes_of(file.tree, ast.ClassDef) if c.lineno <= call.lineno <= (c.end_lineno or c.lineno)]
    if not around:
        return False
    cls = max(around, key=lambda c: c.lineno)  # the innermost class: its `self`
    table = ctx.usage.client_class_table
    label = f"{file.module}.{cls.name}"
    if label not in table:
        return False
    family = set(client_ancestry(ctx.usage, [label]))
    grew = True
    while grew:  # the client classes deriving from a member of the family, however deep
        grew = False
        for key, (_members, bases) in table.items():
            if key not in family and any(b in family for b in bases):
                family.add(key)
                grew = True
    if not any("execute_model" in table.get(key, (set(), []))[0] for key in family):
        return False
    return not _two_phase(ctx, vllm_bases_through(ctx.usage, ctx.api, sorted(family)))


def _two_phase(ctx: ScanContext, classes: list) -> bool:
    """Whether one of these vLLM classes defines sample_tokens (itself or through its bases)."""
    return any(isinstance(ctx.api.class_member(c, "sample_tokens"), Resolved) for c in classes)


def _hands_empty_output(fn: ast.AST, call: ast.Call, empties: set[int]) -> bool:
    """The call's scheduler output is vLLM's `SchedulerOutput.make_empty()` (`empties`: those calls), given directly or
    through a name the function binds only to it and never sets a token count on (vllm-omni's
    `so = SchedulerOutput.make_empty(); so.kv_connector_metadata = ...; model_executor.execute_model(so)`, a step that
    only hands the worker connector metadata). The runner returns before keeping state for such an output
    (`facts.empty_output_returns_early`), so no sample_tokens() is due (VA2)."""
    arg = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "scheduler_output"), None)
    if isinstance(arg, ast.Call):
        return id(arg) in empties
    if not isinstance(arg, ast.Name):
        return False
    values = [n.value for n in nodes_of(fn, ast.Assign, ast.AnnAssign, ast.AugAssign)
              for t in (n.targets if isinstance(n, ast.Assign) else [n.target])
              if isinstance(t, ast.Name) and t.id == arg.id]
    counted = any(isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == arg.id
                  and "scheduled" in t.attr for n in nodes_of(fn, ast.Assign, ast.AnnAssign, ast.AugAssign)
                  for t in (n.targets if isinstance(n, ast.Assign) else [n.target]))
    return bool(values) and all(isinstance(v, ast.Call) and id(v) in empties for v in values) and not counted


def _runners_without_state_check(ctx: ScanContext, raising_file: str) -> list[str]:
    """Model-runner classes of other files that define execute_model and never raise the state error."""
    index = bodies.text_index_for(ctx.api)
    out = []
    for cls in index.classes_defining("execute_model"):
        if cls.path != raising_file and "ModelRunner" in cls.name and STATE_ERROR.encode() not in index.blob(cls.path):
            out.append(f"{cls.path.removeprefix(ctx.api.package + '/')}:{cls.line} {cls.name}")
    return sorted(out)


def check(ctx: ScanContext):
    sites = []
    for file in ctx.usage.files:
        by_fn: dict[int, tuple] = {}
        for c in _calls_named(file.tree, "execute_model"):  # only functions that call execute_model are read
            fn = bodies.enclosing_function(file.tree, c)
            if fn is not None and not _own_method(file.tree, fn, c) and not _client_runner_built(ctx, fn, c) \
                    and not _own_runner_on_self(ctx, file, c) and not _own_family_runner(ctx, file, c):
                by_fn.setdefault(id(fn), (fn, []))[1].append(c)
        for fn, calls in by_fn.values():
            if not [c for c in within(_calls_named(file.tree, "sample_tokens"), fn)]:
                sites += [(file, fn, c) for c in calls]
    if not sites:
        return
    raise_at = two_phase_state_error(ctx.api)
    if raise_at is None:
        defined = has_sample_tokens(ctx.api)
        if defined is None:
            return  # the target has no two-phase protocol
        # The protocol is there but its error text moved or was reworded: cannot tell what a missing call does.
        file, fn, call = sites[0]
        yield ctx.unknown(RULE, f"{ctx.version_label()} defines sample_tokens ({defined[0]}:{defined[1]}) but no "
                          f"\"{STATE_ERROR}\" error: cannot tell whether execute_model() without sample_tokens() fails",
                          loc_of(file, call), "execute_model/sample_tokens")
        return
    typed = {id(c.node): c for c in ctx.usage.calls if c.kind == "method" and c.target.qualname.endswith(".execute_model")}
    early = empty_output_returns_early(ctx.api)
    if early is not None:
        empties = {id(c.node) for c in ctx.usage.calls if c.target.qualname == f"{SCHEDULER_OUTPUT}.make_empty"}
        sites = [(file, fn, call) for file, fn, call in sites if not _hands_empty_output(fn, call, empties)]
    others = None
    for file, fn, call in sites:
        use = typed.get(id(call))
        severity, also = None, ""
        if use is not None and use.target.owner is not None:
            owner = use.target.owner
            if not isinstance(ctx.api.class_member(owner, "sample_tokens"), type(use.target)):
                continue  # this executor has no sample_tokens: single-phase protocol
        elif use is None:
            if others is None:
                others = _runners_without_state_check(ctx, raise_at[0])
            stored = _client_runner_stored(ctx, call)
            if others or stored:  # `runner: Any`: it may be a runner whose execute_model keeps no state (vLLM's V2
                # runner, or the client's own runner stored under the attribute the call reads)
                severity = "warning"
                other = others[0] if others else f"the client's own {stored} (stored as `{call.func.value.attr}`)"
                also = (f" The receiver's class is not known, and {other} runs execute_model without that check, "
                        "so this fails only when the object is the other runner.")
        path, line = raise_at
        yield ctx.finding(
            RULE,
            f"`{ast.unparse(call.func)}(...)` in `{fn.name}` is never followed by sample_tokens(): in {ctx.version_label()} "
            "execute_model() returns None and keeps its state, so the next execute_model() raises RuntimeError: "
            "State error: sample_tokens() must be called after execute_model() returns None. async_scheduling=False "
            "does not avoid it." + also,
            loc_of(file, call), ctx.vllm_location(path, line), "execute_model/sample_tokens", when="call",
            severity=severity,
        )


# ------------------------------------------------------------------------------------- traceback signatures
def _confirm_state(api, _tb, _m):
    where = two_phase_state_error(api)
    return (where is not None, f"{where[0]}:{where[1]}" if where else "no state error in this vLLM")


SIGNATURES = (
    Signature("execute_model() returned None and kept its state; the client called execute_model() again without "
              "sample_tokens() in between.",
              "From vLLM 0.11.1 execute_model() returns None and sample_tokens() must follow; async_scheduling=False does "
              "not change this.",
              message=re.escape(STATE_ERROR), prefer_frame="execute_model", confirm=_confirm_state, priority=110),
)
