"""Shared by the three call-site probes: bind every vLLM call the client makes, once per scan."""

from __future__ import annotations

import ast
from dataclasses import dataclass

from driftcheck.astnodes import dotted_name
from driftcheck.vllm_model.pysummary import resolve_relative
from driftcheck.vllm_model.resolved import Resolved
from driftcheck.rules.context import ScanContext
from driftcheck.vllm_model.signatures import CallProblem, Signature, check_call, signature_from_args
from driftcheck.client_model.client_classes import vllm_bases_through
from driftcheck.client_model.uses import CallUse


@dataclass
class BoundCall:
    use: CallUse
    signature: Signature | None
    problems: list[CallProblem]
    callee: str  # what a user would call it: `Scheduler(...)`, `executor.execute_model(...)`
    fits_override: str | None = None  # a subclass's override that accepts the call: the object may be one
    rebound: str | None = None  # the client rebinds the callee: what to it, and whether it rejects the call too
    rebound_unread: bool = False  # ...to something driftcheck cannot read
    # a class reached through a name an `if` of vLLM's rebinds (`Resolved.otherwise`), whose other class accepts the call
    otherwise_fits: str | None = None
    structural: str | None = None  # the receiver's annotated class is a Protocol: the object is any class with the method

    def qualify(self, finding):
        """A call that fits a subclass's override of the method is not certain to fail: a warning. A callee the
        client rebinds is never fixed (the codemods know vLLM's signature, not the replacement's)."""
        # the callee exists on the target: a hasattr/getattr probe of its name holds there and guards nothing (26e W1)
        finding.details.setdefault("present", self.use.target.qualname.rsplit(".", 1)[-1])
        if self.structural is not None and finding.severity == "error":
            finding.severity = "warning"
            finding.fix = None
            method = self.use.target.qualname.rsplit(".", 1)[-1]
            finding.message += (f" `{self.structural.rsplit('.', 1)[-1]}` is a Protocol (a structural type): the object "
                                f"may be of any class that has `{method}`, whose own signature decides, so this fails "
                                "only when that class's method rejects the call too.")
            finding.details["structural"] = self.structural
        if self.fits_override is not None and finding.severity == "error":
            finding.severity = "warning"
            finding.fix = None
            finding.message += (f" The receiver may be a subclass whose override accepts this call "
                                f"({self.fits_override}), so this fails only when it is not.")
            finding.details["fits_override"] = self.fits_override
        if self.otherwise_fits is not None and finding.severity == "error":
            finding.severity = "warning"
            finding.fix = None
            finding.message += (f" vLLM binds this name to another class under a condition it checks where it binds it "
                                f"({self.otherwise_fits}), whose constructor accepts this call: this fails only when "
                                f"the name holds `{self.use.target.qualname}`.")
            finding.details["otherwise_fits"] = self.otherwise_fits
        if self.rebound is not None:
            finding.fix = None
            finding.details["rebound"] = self.rebound
            if self.rebound_unread:
                if finding.severity == "error":
                    finding.severity = "warning"
                finding.message += (f" The client rebinds it ({self.rebound}), which driftcheck cannot read: this fails "
                                    "only if the call runs before that or the replacement rejects it too.")
            else:
                finding.message += f" The client rebinds it ({self.rebound}), which rejects the call the same way."
        return finding


def signature_for(ctx: ScanContext, use: CallUse) -> Signature | None:
    sig = bound_signature(ctx.api, use.target, use.kind)
    if sig is None or use.kind == "construct" or not use.target.func.decorators:
        return sig
    # keywords a vLLM decorator's wrapper takes before handing the call on (`kwargs.pop("decorate")`: XA)
    return sig.with_keywords(ctx.api.wrapper_keywords(use.target))


def bound_signature(api, target: Resolved, kind: str) -> Signature | None:
    """The parameters a call of `kind` ("construct", "method", "function") binds against `target` in `api`'s release: a
    class's constructor, a method without `self`; None where a decorator we cannot read may take other arguments."""
    if kind == "construct":
        return api.constructor(target)
    if target.func is None or api.reshaping_decorator(target) is not None:
        return None  # a decorator we cannot read may take other arguments (`@tilelang.jit` kernels)
    sig = target.func.signature
    if kind == "method" and not target.func.is_static:
        sig = sig.without_first()
    sig.path = target.path
    return sig


def baseline_signature(baseline, use: CallUse) -> Signature | None:
    """The callee's signature in the client's own vLLM (`baseline`), bound as the call binds it (a method without `self`). A
    method is looked up from the receiver's class, as Python finds it: a subclass's own override in the client's vLLM
    may have moved to the base since (batch 20i's S2)."""
    old = None
    if use.kind == "method" and use.receiver is not None and use.receiver.kind == "class":
        old = baseline.resolve(f"{use.receiver.qualname}.{use.target.qualname.rsplit('.', 1)[-1]}")
    if not isinstance(old, Resolved):
        old = baseline.resolve(use.target.qualname)
    if not isinstance(old, Resolved):
        return None
    if use.kind == "construct" and old.kind != "class":
        return None
    return bound_signature(baseline, old, use.kind)


def callee_label(use: CallUse) -> str:
    target: Resolved = use.target
    short = target.qualname.rsplit(".", 2)
    if use.kind == "method":
        return f"{short[-2]}.{short[-1]}()"
    return f"{short[-1]}()"


def bound_calls(ctx: ScanContext) -> list[BoundCall]:
    """Every vLLM call of the client, bound to the target's signature (once per scan, shared by three rules)."""
    return ctx.once(_bind_all)


def _bind_all(ctx: ScanContext) -> list[BoundCall]:
    out: list[BoundCall] = []
    for use in ctx.usage.calls:
        sig = signature_for(ctx, use)
        problems = check_call(sig, use.shape) if sig is not None else []
        rebound, unread = None, False
        if problems and use.rebound:
            problems, rebound, unread = _through_replacements(ctx, use, problems)
        overridable = problems and use.kind == "method" and not use.via_super and not use.exact
        out.append(BoundCall(use, sig, problems, callee_label(use), _fitting_override(ctx, use) if overridable else None,
                             rebound, unread, _other_class_fits(ctx, use) if problems else None,
                             _structural_receiver(ctx, use) if problems else None))
    return out


def _structural_receiver(ctx: ScanContext, use: CallUse) -> str | None:
    """`tokenizer.apply_chat_template(conversation=...)` on what vLLM 0.13.0's `LLM.get_tokenizer()` annotates as
    `TokenizerLike`, a Protocol: the object is a Hugging Face tokenizer, which takes `conversation`. A method called on
    a value whose annotated class lists `Protocol` among its own bases binds against whatever class the object really
    is; the Protocol's signature is no evidence of failure. The Protocol's qualname, or None. `super()` calls and
    calls on a concrete class (one deriving from a protocol without listing `Protocol`) keep the target's signature."""
    if use.kind != "method" or use.via_super or use.receiver is None:
        return None
    return use.receiver.qualname if ctx.api.is_protocol(use.receiver) else None


def _other_class_fits(ctx: ScanContext, use: CallUse) -> str | None:
    """`AsyncLLMEngine(config, log_stats=True)` where vLLM 0.8-0.10 rebind `AsyncLLMEngine = AsyncLLM` only under
    `if envs.VLLM_USE_V1`: which class the call builds is decided at run time, so a call that only one of the two
    constructors rejects is not certain to fail. The other class, when its constructor accepts the call (or cannot
    be read: it may)."""
    other = use.target.otherwise if use.kind == "construct" else None
    if other is None or other.kind != "class" or other.qualname == use.target.qualname:
        return None
    sig = ctx.api.constructor(other)
    return other.qualname if sig is None or not check_call(sig, use.shape) else None


def _through_replacements(ctx: ScanContext, use: CallUse, problems: list[CallProblem]) -> tuple[list[CallProblem], str, bool]:
    """A call of a vLLM function (or a class whose `__init__`) the client rebinds may run vLLM's original or the
    client's replacement, depending on which ran first: it certainly fails only with a problem that vLLM's signature
    and every replacement share (the same kind, for the same parameter). A replacement driftcheck cannot read
    leaves vLLM's problems, qualified (`BoundCall.qualify`). Returns (problems, note, unread)."""
    notes, unread = [], False
    for r in use.rebound:
        sig, where = _replacement_signature(ctx, r.replacement, 0) if r.replacement else (None, "")
        if sig is None:
            unread = True
            notes.append(f"`{r.name} = {r.code}` at {r.where}")
            continue
        if use.kind == "construct":
            sig = sig.without_first()
        notes.append(f"`{r.name} = {r.code}` at {r.where}, defined at {where}")
        theirs = {(p.kind, p.name) for p in check_call(sig, use.shape)}
        own = _forwarding_wrapper_params(ctx, r.replacement)
        # a wrapper that hands what it does not name on to the original (`original_init(self, *args, **kwargs)`)
        # fails where the original does for everything but its own parameters (RC)
        problems = [p for p in problems if (p.kind, p.name) in theirs or (own is not None and p.name not in own)]
    return problems, "; ".join(notes), unread


# decorators whose wrapper hands the call to the function as it came (`*args, **kwargs`): what the name takes is the def's
_TRANSPARENT = {"contextmanager", "contextlib.contextmanager", "asynccontextmanager", "contextlib.asynccontextmanager",
                "functools.lru_cache", "lru_cache", "functools.cache", "cache", "torch.no_grad", "torch.inference_mode",
                "torch.compiler.disable", "torch._dynamo.disable", "torch.compile"}


def _nested_def(ctx: ScanContext, dotted: str) -> tuple[ast.FunctionDef | ast.AsyncFunctionDef | None, str]:
    """`pkg.mod.outer.<locals>.inner`: the function `inner` that the top-level function `outer` defines (RC)."""
    head, _, name = dotted.partition(".<locals>.")
    module, _, outer = head.rpartition(".")
    found = ctx.client.module_tree(module) if module else None
    if found is None or "." in name:
        return None, ""
    tree, is_package = found
    rel = module.replace(".", "/") + ("/__init__.py" if is_package else ".py")
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == outer:
            inner = [n for n in ast.walk(node) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                     and n.name == name and n is not node]
            return (inner[0], rel) if len(inner) == 1 else (None, "")
    return None, ""


def _forwarding_wrapper_params(ctx: ScanContext, dotted: str | None) -> set[str] | None:
    """The parameters a nested wrapper names itself, when it takes `**kwargs` and passes them on whole to a call in its
    body (the original it wraps); None for anything else."""
    fn = _nested_def(ctx, dotted)[0] if dotted and ".<locals>." in dotted else None
    if fn is None or fn.args.kwarg is None:
        return None
    rest = fn.args.kwarg.arg
    if not any(isinstance(c, ast.Call) and any(k.arg is None and isinstance(k.value, ast.Name) and k.value.id == rest
                                              for k in c.keywords) for c in ast.walk(fn)):
        return None
    return {a.arg for a in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs)}


def _replacement_signature(ctx: ScanContext, dotted: str, depth: int) -> tuple[Signature | None, str]:
    """The signature of the client function `pkg.mod.f`, following `from x import f` re-exports; None when it is not a
    plain `def` (a decorator that may change what it takes, an assignment, a class) or cannot be read. A wrapper a
    patching function defines (`pkg.mod.outer.<locals>.inner`, `@functools.wraps(original)` aside) is read too (RC)."""
    if ".<locals>." in dotted:
        fn, rel = _nested_def(ctx, dotted)
        decorators = [dotted_name(d.func if isinstance(d, ast.Call) else d) or "" for d in fn.decorator_list] if fn else []
        if fn is None or any(d not in _TRANSPARENT | {"wraps", "functools.wraps"} for d in decorators):
            return None, ""
        return signature_from_args(fn.args, rel, fn.lineno), f"{rel}:{fn.lineno}"
    module, _, name = dotted.rpartition(".")
    found = ctx.client.module_tree(module) if module and depth < 8 else None
    body: list[ast.stmt] | None = None
    if found is None and module and depth < 8:  # `pkg.mod.PatchClass.__init__`: a method of a client class (ZT)
        module, _, cls_name = module.rpartition(".")
        found = ctx.client.module_tree(module) if module else None
        cls = next((n for n in found[0].body if isinstance(n, ast.ClassDef) and n.name == cls_name), None) if found else None
        if cls is None:
            return None, ""
        body = cls.body
    if found is None:
        return None, ""
    tree, is_package = found
    rel = module.replace(".", "/") + ("/__init__.py" if is_package else ".py")
    for node in tree.body if body is None else body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
            decorators = [dotted_name(d.func if isinstance(d, ast.Call) else d) or "" for d in node.decorator_list]
            # a patch class's `@staticmethod` is the plain function its framework sets onto a module (26h F1)
            plain = _TRANSPARENT | ({"staticmethod"} if body is not None else set())
            if any(d not in plain for d in decorators):
                return None, ""  # the decorator decides what the name takes
            return signature_from_args(node.args, rel, node.lineno), f"{rel}:{node.lineno}"
        if isinstance(node, ast.ImportFrom) and any((a.asname or a.name) == name for a in node.names):
            alias = next(a for a in node.names if (a.asname or a.name) == name)
            source = resolve_relative(module, is_package, node.level, node.module)
            return _replacement_signature(ctx, f"{source}.{alias.name}", depth + 1)
    return None, ""


def _fitting_override(ctx: ScanContext, use: CallUse) -> str | None:
    """The first override of the called method, in a client subclass or a subclass of the tree, that accepts
    the call's shape: a receiver typed as the base class may be such an object at run time."""
    owner, name = use.target.owner, use.target.qualname.rsplit(".", 1)[-1]
    if owner is None:
        return None
    for label, sig in ctx.usage.client_overrides.get(owner.qualname, {}).get(name, []):
        if not check_call(sig.without_first(), use.shape):
            return label
    for sub in ctx.api.subclasses(owner):
        fn = sub.cls.methods.get(name)
        if fn is not None and not fn.is_static and not check_call(fn.signature.without_first(), use.shape):
            return f"{sub.qualname}.{name}"
    return _override_in_unread_file(ctx, owner, name, use)


def _override_in_unread_file(ctx: ScanContext, owner: Resolved, name: str, use: CallUse) -> str | None:
    """An override that fits, in a client class of a file that imports no vLLM (so no phase read it) and derives,
    through client classes of other files, from one whose vLLM bases reach `owner`: a call on such a base's `self`
    may be that class's (vllm-ascend's `DFlashProposer(SpecDecodeBaseProposer)` in a file of its own, whose base calls
    `self.build_model_inputs_first_pass(n)`)."""
    if not ctx.usage.client_vllm_bases:
        return None
    methods = ctx.once(_unread_methods).get(name)
    if not methods:
        return None
    reached = ctx.once(_reached_memo)
    for label, sig, bases in methods:
        for base in bases:
            if base not in reached:
                reached[base] = _vllm_classes_reached(ctx, base)
        if any(owner.qualname in reached[b] for b in bases) and not check_call(sig.without_first(), use.shape):
            return label
    return None


def _unread_methods(ctx: ScanContext) -> dict[str, list[tuple[str, Signature, list[str]]]]:
    """Method name -> (class.method, its signature, the class's base labels) for the classes of the client's files
    without vLLM: read once (each file parsed once, nothing of its tree kept)."""
    out: dict[str, list[tuple[str, Signature, list[str]]]] = {}
    for file in ctx.client.other_files("class "):
        imported = _imported_names(file)
        for cls in (n for n in file.tree.body if isinstance(n, ast.ClassDef)):
            bases = _base_labels(cls, imported)
            if not bases:
                continue
            for fn in (s for s in cls.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))):
                out.setdefault(fn.name, []).append((f"{file.module}.{cls.name}.{fn.name}",
                                                    signature_from_args(fn.args, file.rel, fn.lineno), bases))
    return out


def _reached_memo(_ctx: ScanContext) -> dict[str, frozenset[str]]:
    return {}


def _vllm_classes_reached(ctx: ScanContext, label: str) -> frozenset[str]:
    """The vLLM classes, with their MROs, a client class derives from through client classes of any file."""
    return frozenset(c.qualname for v in vllm_bases_through(ctx.usage, ctx.api, [label]) for c in ctx.api.mro(v)[0])


def _imported_names(file) -> dict[str, str]:
    """Local name -> the dotted module or "module.Name" it is bound to by the file's module-level imports."""
    out: dict[str, str] = {}
    package = file.rel.endswith("__init__.py")
    for node in file.tree.body:
        if isinstance(node, ast.Import):
            out.update({a.asname: a.name for a in node.names if a.asname})
        elif isinstance(node, ast.ImportFrom):
            module = resolve_relative(file.module, package, node.level, node.module) if node.level else node.module
            out.update({a.asname or a.name: f"{module}.{a.name}" for a in node.names if module})
    return out


def _base_labels(cls: ast.ClassDef, imported: dict[str, str]) -> list[str]:
    out = []
    for base in cls.bases:
        dotted = dotted_name(base) or ""
        first, _, rest = dotted.partition(".")
        if first in imported:
            out.append(f"{imported[first]}.{rest}" if rest else imported[first])
    return out


def when_of(use: CallUse) -> str:
    return "call" if use.runtime_only else "import"


def may_reach_the_client(ctx: ScanContext, call) -> bool:
    """The call may run the client's own code instead of vLLM's: a replacement the client binds, or (for a method) an
    override in a client class. What DC115 (the returns it counts) and DC118 (`async` or not) read is then not
    vLLM's to say."""
    if call.rebound:
        return True
    target: Resolved = call.target
    if target.kind != "method" and call.kind != "method":
        return False
    name = target.qualname.rsplit(".", 1)[-1]
    owner = target.qualname.rsplit(".", 1)[0]
    if (owner, name) in ctx.usage.patched or any(name in m for m in ctx.usage.client_overrides.values()):
        return True
    return False
