"""DC006 missing-attribute: the client reads an attribute or calls a method that the target's class lacks.

driftcheck infers the vLLM type of receivers (`self.scheduler = Scheduler(...)`, annotations,
vLLM return annotations) and looks the attribute up through the class's MRO, including attributes
assigned in any method and dataclass fields. A read fails with `AttributeError` when the line runs;
a write to an attribute vLLM no longer has is silently ignored by vLLM (a warning). Where the receiver may be
another object than its type says, a read is a warning naming why: an annotation no read fits, a caller passing an
unrelated class, a method called unbound with another object, or a method taken off its class as a value (handed to a
patch helper, set on another class): its `self` is whatever it is set on. A `self.x` read in a method of a client class
the client never builds, where every client subclass overrides that method, runs for no object the client makes: a
warning that says so. `x.m += v` reads `m` first (JC1); `super().m` looks only at the classes after the client's
own, so a member its vLLM bases lack is an AttributeError too, unless the class may sit before other bases in a
subclass's MRO (JC3); the methods of a vLLM subclass a function defines are read as a module-level class's (JC2).
A member read off a vLLM class itself (`GPUModelRunner._reshape_kv_cache_tensors`, the read before a monkey-patch
replaces it) is checked whether or not its name starts with `_`; a private one is left alone where a base outside
vLLM or a metaclass may give it (`_abc_impl`, an Enum's `_member_map_`), and dunders always (25a M1).
An attribute the class's `__init__` sets only under an `if` (V1 `LLMEngine.model_executor`, only when `not
multiprocess_mode`), read from outside the class family, is a warning naming that condition (28b M1).
"""

from __future__ import annotations

import ast
import bisect
import itertools

from driftcheck.vllm_model import bodies
from driftcheck.vllm_model.resolved import InSubclass, Missing, Resolved, Unknown
from driftcheck.astnodes import first_line, nodes_of, walk
from driftcheck.rules.context import ScanContext, once_per_client
from driftcheck.rules.findings import Rule
from driftcheck.client_model.isinstance_narrowing import tests_before
from driftcheck.client_model.patch_classes import replacement_function
from driftcheck.client_model.source_diffs import added_members
from driftcheck.vllm_model.pysummary import resolve_relative

# No codemod: "similar" names are a hint, not a rename the target proves (DC008, which compares with the
# client's own vLLM, is the rule that renames), so a DC006 finding never offers one.
# whole_client: a member the client sets in one file exists where another file reads it, and a caller in one
# file can contradict an annotation in another (usage.finish_client, _caller_contradicts)
RULE = Rule("DC006", "missing-attribute", "Attribute or method not found on the target's vLLM class", "error",
            raises=("AttributeError",), whole_client=True)


MISMATCH_MIN = 3  # distinct attributes, all absent from the annotated class, before the annotation is doubted


def _annotated_parameter(use) -> tuple[int, str] | None:
    """(function id, parameter) when the receiver is a parameter of the enclosing function with an annotation."""
    if not isinstance(use.node.value, ast.Name):
        return None
    fn = bodies.enclosing_function(use.file.tree, use.node)
    if fn is None:
        return None
    name = use.node.value.id
    for arg in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs:
        if arg.arg == name and arg.annotation is not None:
            return id(fn), name
    return None


def _mismatched_annotations(ctx: ScanContext) -> dict[tuple[int, str], list[str]]:
    """Parameters whose annotated class has none of the (several) attributes the function reads from them:
    `def __init__(self, config: ModelConfig)` handed a Hugging Face config. The annotation, not vLLM, is
    what changed there, so those reads are warnings, not certain failures."""
    reads: dict[tuple[int, str], dict[str, object]] = {}
    for use in ctx.usage.attrs:
        if use.store:
            continue
        key = _annotated_parameter(use)
        if key is not None:
            reads.setdefault(key, {})[use.attr] = use.result
    # the class "fits" only through members it defines (an attribute some other code assigns somewhere is no sign)
    return {k: sorted(a for a, r in v.items() if isinstance(r, Missing)) for k, v in reads.items()
            if len(v) >= MISMATCH_MIN and not any(isinstance(r, Resolved) for r in v.values())
            and any(isinstance(r, Missing) for r in v.values())}


def _defined_names(ctx: ScanContext) -> dict[str, int]:
    """How many client functions and classes carry each name: a caller found by name is only evidence
    when the name is unique (counted once per scan)."""
    return ctx.once(_count_defined_names)


def _count_defined_names(ctx: ScanContext) -> dict[str, int]:
    counts: dict[str, int] = {}
    for file in ctx.usage.files:
        for node in nodes_of(file.tree, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
            counts[node.name] = counts.get(node.name, 0) + 1
    return counts


def _enclosing_class(tree: ast.AST, fn: ast.AST) -> ast.ClassDef | None:
    return next((node for node in nodes_of(tree, ast.ClassDef) if fn in node.body), None)


def _related(ctx: ScanContext, declared: Resolved, passed: str) -> bool:
    found = ctx.api.resolve(passed)
    if isinstance(found, Resolved) and found.kind == "class":
        mro = {c.qualname for c in ctx.api.mro(found)[0]}
        return declared.qualname in mro or passed in {c.qualname for c in ctx.api.mro(declared)[0]}
    return passed in ctx.api.mro(declared)[2]  # a class outside vLLM: related only if the declared class derives from it


def _caller_contradicts(ctx: ScanContext, use) -> str | None:
    """A caller that hands this annotated parameter an object of an unrelated class (`model_config=config` with
    `config: KimiLinearConfig`, or the Hugging Face config): the annotation does not describe the value. Also through
    callers that hand on an untyped parameter of their own (`lmcache_retrieve_kv(model_executable, ...)` whose only
    caller passes the runner's model): what their callers pass, up to three functions up."""
    if not isinstance(use.node.value, ast.Name):
        return None
    fn = bodies.enclosing_function(use.file.tree, use.node)
    if fn is None:
        return None
    return _passed_unrelated(ctx, use.owner, use.file, fn, use.node.value.id, 0, set())


def _passed_unrelated(ctx: ScanContext, declared: Resolved, file, fn, name: str, depth: int, seen: set) -> str | None:
    """What a caller of `fn` passes for its parameter `name` that is not a `declared`, directly or through callers
    that hand on a parameter of their own."""
    owner = _enclosing_class(file.tree, fn)
    callee = owner.name if owner is not None and fn.name == "__init__" else fn.name
    unique = _defined_names(ctx).get(callee, 0) == 1
    params = [a.arg for a in fn.args.posonlyargs + fn.args.args]
    bound = owner is not None and not any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in fn.decorator_list)
    index = params.index(name) - (1 if bound else 0) if name in params else None

    def reaches(key, path) -> bool:  # a name several client files define counts only at callers that import it from here
        return (unique or path == file.rel or _imports_from(ctx, path, callee, file.module)) and (key == name or key == index)

    for key, passed, path, line in ctx.usage.passed.get(callee, []):
        if reaches(key, path) and not _related(ctx, declared, passed):
            if passed.endswith("[]"):  # an element of a container a third party's object holds
                return f"{path}:{line} passes an element of `{'.'.join(passed[:-2].split('.')[-2:])}`"
            return f"{path}:{line} passes a `{passed.rsplit('.', 1)[-1]}`"
    if depth >= 2:
        return None
    for key, caller, caller_line, param, path, line in _forwarded(ctx, callee):
        if not reaches(key, path) or (path, caller_line, param) in seen:
            continue
        seen.add((path, caller_line, param))
        caller_file = ctx.usage.file_at(path)
        caller_fn = next((n for n in nodes_of(caller_file.tree, ast.FunctionDef, ast.AsyncFunctionDef)
                          if n.name == caller and n.lineno == caller_line), None) if caller_file is not None else None
        found = _passed_unrelated(ctx, declared, caller_file, caller_fn, param, depth + 1, seen) if caller_fn else None
        if found:
            return f"{found} on through `{caller}` ({path}:{line})"
    return None


def _forwarded(ctx: ScanContext, callee: str) -> list[tuple[int | str, str, int, str, str, int]]:
    """(parameter position or keyword, calling function, its line, its parameter, file, line) for each call of
    `callee` that hands on an unannotated parameter of the calling function the function never rebinds
    (`return create_model_input_subset(model_name, model_executable)` in `lmcache_retrieve_kv(model_executable, ...)`):
    what reaches that parameter reaches the callee's. Asked for a few callees only, so only the files whose text
    spells the callee are read (every call of a whole-platform client was seconds)."""
    memo = ctx.once(_forwarded_memo)
    if callee in memo:
        return memo[callee]
    out: list[tuple[int | str, str, int, str, str, int]] = []
    memo[callee] = out
    for file in ctx.usage.files:
        if callee not in file.text:
            continue
        untyped: dict[int, set[str]] = {}  # function -> its unannotated parameters it never rebinds
        bindings = None  # the file's, made when a function first needs them and dropped with the file
        for call in nodes_of(file.tree, ast.Call):
            name = call.func.id if isinstance(call.func, ast.Name) else \
                call.func.attr if isinstance(call.func, ast.Attribute) else None
            if name != callee:
                continue
            args = [(i, a) for i, a in enumerate(call.args)] + [(k.arg, k.value) for k in call.keywords if k.arg]
            args = [(key, a.id) for key, a in args if isinstance(a, ast.Name)]
            fn = bodies.enclosing_function(file.tree, call) if args else None
            if fn is None:
                continue
            if id(fn) not in untyped:
                names = {a.arg for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs if a.annotation is None}
                if names:
                    bindings = bindings or _bindings(file.tree)
                    names -= _bound_within(bindings, fn)
                untyped[id(fn)] = names
            for key, arg in args:
                if arg in untyped[id(fn)]:
                    out.append((key, fn.name, fn.lineno, arg, file.rel, call.lineno))
    return out


def _forwarded_memo(_ctx: ScanContext) -> dict[str, list]:
    return {}


def _bound_within(bindings: tuple[list[int], list[set[str]]], fn: ast.AST) -> set[str]:
    """The names the assignments, loops and walruses within `fn`'s lines bind (what walking `fn` would find; from the
    file's sorted `_bindings`, not a walk per function: nested functions made that quadratic)."""
    lines, names = bindings
    start = first_line(fn)
    out: set[str] = set()
    for bound in names[bisect.bisect_left(lines, start):bisect.bisect_right(lines, fn.end_lineno)]:
        out |= bound
    return out


def _bindings(tree: ast.AST) -> tuple[list[int], list[set[str]]]:
    """The lines of a file's binding statements, sorted, and the names each binds (not kept: a whole vLLM tree as a
    client has 300,000 of them)."""
    nodes = sorted(nodes_of(tree, ast.Assign, ast.AugAssign, ast.AnnAssign, ast.For, ast.AsyncFor, ast.NamedExpr),
                   key=lambda n: n.lineno)
    return [n.lineno for n in nodes], [{n.id for t in (node.targets if isinstance(node, ast.Assign) else [node.target])
                                        for n in walk(t) if isinstance(n, ast.Name)} for node in nodes]


def _handed_out(ctx: ScanContext, cls_name: str, method: str) -> str | None:
    """"file:line" where the client takes `cls_name.method` off the class as a value, not called
    (`patch_or_inject(mod.GPUModelRunner, "_update_states", stand_in.GPUModelRunner._update_states)`,
    `Target.m = StandIn.m`): whatever object it is then set on is its `self` (uc-manager's never-built stand-in runners
    lend their methods to vLLM's own runner through an import hook). Every client file counts, those without a vLLM
    import too. Only files whose text spells `cls_name.method` are read again: reading every tree from a forked unit
    copied the whole client's pages into it."""
    memo = ctx.once(_hand_out_memo)
    if (cls_name, method) not in memo:
        needle = f"{cls_name}.{method}"
        files = (f for f in ctx.client.files if needle in f.text)
        memo[cls_name, method] = next((where for f in itertools.chain(files, ctx.client.other_files(needle))
                                       if (where := _taken_off(f, cls_name, method))), None)
    return memo[cls_name, method]


def _hand_out_memo(_ctx: ScanContext) -> dict[tuple[str, str], str | None]:
    return {}


def _taken_off(f, cls_name: str, method: str) -> str | None:
    """"file:line" of the first `X.method` / `x.X.method` (X = cls_name) a file reads without calling it."""
    called = {id(c.func) for c in nodes_of(f.tree, ast.Call)}
    for node in nodes_of(f.tree, ast.Attribute):
        owner = node.value
        name = owner.id if isinstance(owner, ast.Name) else owner.attr if isinstance(owner, ast.Attribute) else None
        if node.attr == method and name == cls_name and id(node) not in called and isinstance(node.ctx, ast.Load):
            return f"{f.rel}:{node.lineno}"
    return None


def _imports_from(ctx: ScanContext, path: str, name: str, module: str) -> bool:
    """Whether client file `path` imports `name` from client module `module` (absolutely or relatively)."""
    known = ctx.once(_import_memo)  # filled per file on demand: a unit asks about few of the client's files
    if path not in known:
        file = ctx.usage.file_at(path)
        found: set[tuple[str, str]] = set()
        for node in nodes_of(file.tree, ast.ImportFrom) if file is not None else ():
            source = resolve_relative(file.module, file.rel.endswith("__init__.py"), node.level, node.module)
            found |= {(source, a.name) for a in node.names}
        known[path] = found
    return (module, name) in known[path]


def _import_memo(_ctx: ScanContext) -> dict[str, set[tuple[str, str]]]:
    return {}


def _doubt(ctx: ScanContext, use, mismatched: dict) -> str | None:
    """Why the receiver's type is doubted, if it is: its annotation fits none of several reads, a caller
    contradicts it, or it is `self` of a method also called unbound with another object."""
    if isinstance(use.node.value, ast.Name):
        fn = bodies.enclosing_function(use.file.tree, use.node)
        params = fn.args.posonlyargs + fn.args.args if fn is not None else []
        calls = ctx.usage.unbound_called.get(fn.name, []) if params and params[0].arg == use.node.value.id else []
        for of, path, line in calls:  # `type(x).m(obj)` with x of this class (or a relative): m's self is obj
            if _related(ctx, use.owner, of):
                return f"but `{fn.name}` is also called unbound with another object as `{use.node.value.id}` ({path}:{line})"
        cls = _enclosing_class(use.file.tree, fn) if params and params[0].arg == use.node.value.id else None
        where = _handed_out(ctx, cls.name, fn.name) if cls is not None else None
        if where:
            return (f"but `{cls.name}.{fn.name}` is handed out as a function ({where}): its `{use.node.value.id}` is "
                    "whatever object that function is set on")
    key = _annotated_parameter(use)
    if key is None:
        return None
    doubted = mismatched.get(key)
    if doubted:
        return (f"nor any of the {len(doubted)} attributes this function reads from `{use.node.value.id}` "
                f"({', '.join(doubted[:5])})")
    contradicted = _caller_contradicts(ctx, use)
    return f"and a caller of the function that annotates it ({contradicted})" if contradicted else None


def _asserted_before(use) -> ast.Assert | None:
    """An `assert hasattr(obj, "attr")` for this read's object and attribute, earlier in a block whose later statement
    holds the read: it runs first and, the attribute being absent, raises AssertionError there (UH)."""
    target = ast.dump(use.node.value)
    for node in nodes_of(use.file.tree, ast.Assert):
        if node.lineno >= use.node.lineno or not any(
                attr == use.attr and ast.dump(obj) == target for obj, attr in _hasattr_pairs(node.test)):
            continue
        for block in _blocks_holding(use.file.tree, node):
            after = block[block.index(node) + 1:]
            if any(stmt.lineno <= use.node.lineno <= (stmt.end_lineno or stmt.lineno) for stmt in after):
                return node
    return None


def _hasattr_pairs(test: ast.expr) -> list[tuple[ast.expr, str]]:
    """(object, name) of each `hasattr(obj, "name")` an assert's test requires (`a and b` requires both)."""
    parts = test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) else [test]
    return [(p.args[0], p.args[1].value) for p in parts
            if isinstance(p, ast.Call) and isinstance(p.func, ast.Name) and p.func.id == "hasattr" and len(p.args) == 2
            and isinstance(p.args[1], ast.Constant) and isinstance(p.args[1].value, str)]


def _blocks_holding(tree: ast.AST, stmt: ast.stmt) -> list[list[ast.stmt]]:
    """The statement lists (a body, an `else`, a handler's body...) that `stmt` is an item of."""
    return [block for node in walk(tree) for field in ("body", "orelse", "finalbody")
            for block in [getattr(node, field, None)] if isinstance(block, list) and any(s is stmt for s in block)]


def _diff_adds_member(ctx: ScanContext, use) -> str | None:
    """The client ships a diff for vLLM's source that applies to this release (alone or after others of its series)
    and adds the member to the class or one of its bases (source_diffs.added_members, ZW): it exists where the diff
    was applied, which cannot be known."""
    added = added_members(ctx.client.tree, ctx.api.tree)
    if not added:
        return None
    for c in ctx.api.mro(use.owner)[0]:
        diff = added.get((c.path, c.cls.name, use.attr)) if c.cls is not None and c.path else None
        if diff is not None:
            return (f"`{use.owner.cls.name}` has no attribute '{use.attr}' in {ctx.version_label()}, but the client "
                    f"ships a patch for vLLM's own source ({diff}) that adds it to `{c.cls.name}` in {c.path} and "
                    "applies to this release; whether it was applied cannot be known")
    return None


def check(ctx: ScanContext):
    seen_unknown: set[str] = set()
    mismatched = _mismatched_annotations(ctx)
    for use in ctx.usage.attrs:
        symbol = f"{use.owner.qualname}.{use.attr}"
        # a store on a msgspec.Struct: `dict=True` takes any name, without it (or frozen) none but its fields (KC1)
        layout = ctx.api.struct_layout(use.owner) if use.store and isinstance(use.result, (Missing, Unknown)) else None
        if layout == "dict" and isinstance(use.result, Unknown):
            yield ctx.finding(
                RULE, f"`{use.owner.cls.name}` has no attribute '{use.attr}' in {ctx.version_label()}: this assignment "
                "creates a new attribute (the class is a msgspec.Struct whose instances have a __dict__) "
                "that vLLM never reads.", use.loc, ctx.vllm_location(use.owner.path, use.owner.line), symbol,
                when="call", severity="warning", fix=False,
            )
            continue
        # the store itself raises, whatever the class defines (unless the name may hold another class: `otherwise`)
        refused = layout in ("slots", "frozen") and (isinstance(use.result, Missing) or use.owner.otherwise is None)
        if isinstance(use.result, Unknown) and not refused:
            if use.store and use.result.read_hook:
                continue  # `m.forward = f` on an object whose class answers reads by `__getattr__`: a store sets it (26g R3)
            if (symbol, use.loc.line) not in seen_unknown:  # each line: a guarded one is a warning (units._guarded_question)
                seen_unknown.add((symbol, use.loc.line))
                yield once_per_client(ctx.unknown(RULE, f"cannot tell whether `{symbol}` exists: {use.result.reason}", use.loc, symbol))
            continue
        if isinstance(use.result, InSubclass) and not use.store:
            sub = use.result
            if not sub.subclass:
                why = "it is a Protocol, so the object passed may be any class that has it"
            elif sub.others:
                why = (f"{sub.subclass} and {sub.others} other subclass{'es' if sub.others > 1 else ''} define it, so this"
                       " line fails with AttributeError when the object is none of those")
            else:
                why = f"only {sub.subclass} defines it, so this line fails with AttributeError when the object is not one of those"
                patched = _new_builds(ctx, use.owner.qualname, sub.subclass)
                if patched:
                    why = (f"only {sub.subclass} defines it, and the client replaces `{use.owner.cls.name}.__new__` "
                           f"({patched}) with one that builds {sub.subclass.rsplit('.', 1)[-1]}: this line fails with "
                           f"AttributeError only for a {use.owner.cls.name} built before that patch is applied")
            asserted = _asserted_before(use)
            if asserted is not None:  # the client checks first: the assert is what fails, not this line
                why = why.replace("so this line fails with AttributeError when the object is", (
                    f"and the `{ast.unparse(asserted)}` on line {asserted.lineno} checks it first: AssertionError "
                    "there (AttributeError here under `python -O`) when the object is"))
            yield ctx.finding(
                RULE, f"`{use.owner.cls.name}` has no attribute '{use.attr}' in {ctx.version_label()}; {why}.",
                use.loc, ctx.vllm_location(sub.path, sub.line) if sub.path.startswith(ctx.api.package + "/") else None,
                symbol, when="call", severity="warning", fix=False, defined_by=sub.subclass or None,
                may_be_absent=True,  # only some objects have it: nothing to say where the client probes for it
            )
            continue
        if not isinstance(use.result, Missing) and not refused:
            condition = _set_only_when(ctx, use)
            if condition is not None:
                yield ctx.finding(
                    RULE, f"`{use.owner.cls.name}` has '{use.attr}' in {ctx.version_label()} only when {condition}: "
                    "AttributeError when this line runs on one built otherwise.", use.loc,
                    ctx.vllm_location(use.result.path, use.result.line), symbol, when="call", severity="warning",
                    fix=False, may_be_absent=True)  # a hasattr of it, a try catching AttributeError: handled
            continue
        near = use.result.near if isinstance(use.result, Missing) else ()
        doubt = None if use.store and not refused else _doubt(ctx, use, mismatched)
        if doubt:
            yield ctx.finding(
                RULE, f"`{use.owner.cls.name}` has no attribute '{use.attr}' in {ctx.version_label()}, {doubt}: the "
                "object may not be what its annotation or class says; if it is, AttributeError when this line runs.",
                use.loc, ctx.vllm_location(use.owner.path, use.owner.line), symbol, when="call", severity="warning",
                fix=False, annotation_doubted=True,
            )
            continue
        patched = _diff_adds_member(ctx, use) if refused or not use.store else None
        if patched is not None:  # the field a shipped diff adds to the struct (or to any class) is there if applied
            yield ctx.unknown(RULE, patched, use.loc, symbol)
            continue
        if use.store and refused:
            why = "is frozen" if layout == "frozen" else "has no __dict__ (no `dict=True`)"
            message = (f"`{use.owner.cls.name}` has no attribute '{use.attr}' in {ctx.version_label()}: it is a "
                       f"msgspec.Struct that {why}, so this assignment raises AttributeError when this line runs.")
            severity = None
        elif use.store:
            if _read_by_vllm(ctx, use) is not None:
                continue  # vLLM looks for it on the objects it is handed: the store is what turns it on
            if _read_back(use) and not bodies.text_index_for(ctx.api).files_mentioning(use.attr):
                # the client's own marker (`if not getattr(layer, "_dumped", False): layer._dumped = True`), a name
                # vLLM's sources never mention: no setting of vLLM's that it meant to turn on (26d R1)
                continue
            message = (f"`{use.owner.cls.name}` has no attribute '{use.attr}' in {ctx.version_label()}: this assignment "
                       "creates a new attribute that vLLM never reads.")
            severity = "warning"
        else:
            idle = _runs_for_no_built_object(ctx, use)
            if idle:
                yield ctx.finding(
                    RULE, f"`{use.owner.cls.name}` has no attribute '{use.attr}' in {ctx.version_label()}, but {idle}: "
                    "AttributeError only if code driftcheck does not see builds one and calls it.",
                    use.loc, ctx.vllm_location(use.owner.path, use.owner.line), symbol, when="call", severity="warning",
                    fix=False,
                )
                continue
            message = f"`{use.owner.cls.name}` has no attribute '{use.attr}' in {ctx.version_label()}: AttributeError when this line runs."
            severity = None
            asserted = _asserted_before(use)
            if asserted is not None:  # the client checks first: the assert is what fails
                message = (f"`{use.owner.cls.name}` has no attribute '{use.attr}' in {ctx.version_label()}: the "
                           f"`{ast.unparse(asserted)}` on line {asserted.lineno} fails first (AssertionError; "
                           "under `python -O`, which drops asserts, AttributeError on this line).")
        if near:
            message += f" Similar: {', '.join(near)}."
        yield ctx.finding(
            RULE, message, use.loc, ctx.vllm_location(use.owner.path, use.owner.line), symbol, when="call",
            severity=severity, fix=False, similar=near or None, tested_as=list(use.tested_as) or None,
        )


def _set_only_when(ctx: ScanContext, use) -> str | None:
    """Where the class's `__init__` sets the attribute read only under an `if` (`conditional_attrs`; 28b M1: V1
    `LLMEngine.model_executor`, set only when `not multiprocess_mode`, the default being multiprocess): that
    condition, said for the message. A read on `self` or `cls` is the class family's own, made where its own
    condition holds; a base (or another class of the MRO) that sets the name makes it always there."""
    found = use.result
    if use.store or not isinstance(found, Resolved) or found.kind != "attribute" or found.cls is None \
            or found.func is not None or use.attr not in found.cls.conditional_attrs:
        return None
    if isinstance(use.node.value, ast.Name) and use.node.value.id in ("self", "cls"):
        return None
    order, is_open, _externals = ctx.api.mro(use.owner)
    if is_open:
        return None  # a base driftcheck does not read may set it
    for c in order:
        ci = c.cls
        if ci is None or ci is found.cls:
            continue
        if use.attr in ci.methods or use.attr in ci.class_attrs or any(f.name == use.attr for f in ci.fields) \
                or (use.attr in ci.instance_attrs and use.attr not in ci.conditional_attrs):
            return None
    flags = found.cls.condition_flags.get(use.attr)
    if flags:  # `if state.supports_mm_inputs: state.encoder_runner...`: read where the object's flag says it is set
        receiver = ast.unparse(use.node.value)
        recorded = {f"{receiver}.{flag}" for flag in flags}
        if any(isinstance(n, ast.Attribute) and ast.unparse(n) in recorded
               for test in tests_before(use.file.tree, use.node) for n in walk(test)):
            return None
    line, test = found.cls.conditional_attrs[use.attr]
    return f"`{test}` (the `if` on line {line} of its `__init__`)"


def _read_back(use) -> bool:
    """Whether the file that stores the member vLLM never reads also reads it itself, by name (`x._dumped`,
    `getattr(x, "_dumped", False)`, `hasattr`): with a name vLLM never mentions, an attribute of the client's own on
    vLLM's object (26d R1: ds4's `layer._ds4_prefix_dumped`); a name vLLM knows (`cache_config.calculate_kv_scales`)
    may be a setting of an older vLLM that this one no longer reads, which the warning is for."""
    for node in walk(use.file.tree):
        if isinstance(node, ast.Attribute) and node.attr == use.attr and isinstance(node.ctx, ast.Load):
            return True
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("getattr", "hasattr") \
                and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant) and node.args[1].value == use.attr:
            return True
    return False


def _read_by_vllm(ctx: ScanContext, use) -> tuple[str, int] | None:
    """Where vLLM's own code reads the member a client store creates though no class body defines it: by its name,
    as an optional member of what it is handed (`getattr(layer, "is_bmm", False)`, a flag the caller sets), or, on
    a torch module, where other vLLM code creates it from outside the class (`_init_kv_cache_quant(self, ...)` sets
    `layer._k_scale`; a quantization method registers `w13_weight_scale_inv`), as reads of it are taken (TL2)."""
    found = ctx.api.read_by_name(use.attr)
    if found is None and "torch.nn.Module" in ctx.api.mro(use.owner)[2]:
        found = ctx.api.assigned_from_outside(use.attr)
    return found


def _new_builds(ctx: ScanContext, owner: str, subclass: str) -> str | None:
    """Where the client replaces `owner.__new__` with a function of its own that names the client class `subclass`
    (`ParallelConfigPatch.__new__` returning `ArcticParallelConfig.__new__(ArcticParallelConfig, ...)`), or None."""
    short = subclass.rsplit(".", 1)[-1]
    for r in ctx.usage.rebound.get((owner, "__new__"), ()):
        found = replacement_function(ctx.usage, r.replacement)
        if found is not None and any(isinstance(n, ast.Name) and n.id == short for n in walk(found[1])):
            return r.where
    return None


def _runs_for_no_built_object(ctx: ScanContext, use) -> str | None:
    """Why `self.x` in a method of a client class runs for no object the client builds, or None: the class is never
    built (its name is read only as a base, in isinstance / issubclass, in annotations, or to reach a member it defines
    that is no classmethod; never a decorator, a value handed on or a string that could name it) and every client
    subclass overrides the method (auto-round's `AutoRoundMoEMethod.get_fused_moe_quant_config` reads `self.impl`,
    which only its never-built base lacks; NB2)."""
    if not isinstance(use.node.value, ast.Name):
        return None
    fn = bodies.enclosing_function(use.file.tree, use.node)
    if fn is None or not fn.args.args or fn.args.args[0].arg != use.node.value.id \
            or any(isinstance(d, ast.Name) and d.id in ("staticmethod", "classmethod") for d in fn.decorator_list):
        return None
    cls = _enclosing_class(use.file.tree, fn)
    if cls is None or cls not in use.file.tree.body or cls.decorator_list:
        return None
    hook = ctx.api.class_member(use.owner, "__init_subclass__")
    if isinstance(hook, Resolved) and hook.path.startswith(ctx.api.package + "/"):
        return None  # a vLLM base that registers each subclass may build it
    memo = ctx.once(_idle_methods)
    if (cls.name, fn.name) not in memo:
        memo[cls.name, fn.name] = _idle_method(ctx, cls, fn.name)
    return memo[cls.name, fn.name]


def _idle_methods(_ctx: ScanContext) -> dict[tuple[str, str], str | None]:
    return {}


def _idle_method(ctx: ScanContext, cls: ast.ClassDef, method: str) -> str | None:
    name = cls.name
    # every answer below needs the name spelled in the file: the other files cannot build, subclass or name the class
    files = [*(f for f in ctx.client.files if name in f.text), *ctx.client.other_files(containing=name)]
    if sum(1 for f in files for n in f.tree.body if isinstance(n, ast.ClassDef) and n.name == name) != 1:
        return None  # two client classes of that name: which one a base or a call names is not read here
    members = {n.name: n for n in cls.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    subclasses: list[str] = []
    for f in files:
        quiet: set[int] = set()  # the name nodes and strings in places that build nothing
        for n in walk(f.tree):
            if isinstance(n, ast.ClassDef):
                quiet |= {id(b) for b in n.bases} | {id(b.value) for b in n.bases if isinstance(b, ast.Attribute)}
                if any(_last_name(b) == name for b in n.bases):
                    if not any(isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)) and m.name == method for m in n.body):
                        return None  # a subclass that inherits the method runs it
                    subclasses.append(n.name)
            elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
                quiet |= {id(x) for a in (*n.args.posonlyargs, *n.args.args, *n.args.kwonlyargs, n.args.vararg,
                                          n.args.kwarg) if a is not None and a.annotation is not None
                          for x in walk(a.annotation)}
                quiet |= {id(x) for x in walk(n.returns)} if n.returns is not None else set()
            elif isinstance(n, ast.AnnAssign):
                quiet |= {id(x) for x in walk(n.annotation)}
            elif isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in ("isinstance", "issubclass") \
                    and len(n.args) == 2:
                quiet |= {id(x) for x in walk(n.args[1])}
            elif isinstance(n, ast.alias) and n.name.rsplit(".", 1)[-1] == name and n.asname not in (None, name):
                return None  # imported under another name: its uses are not followed here
            elif isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == name:
                member = members.get(n.attr)
                if member is not None and not any(isinstance(d, ast.Name) and d.id == "classmethod"
                                                  for d in member.decorator_list):
                    quiet.add(id(n.value))  # `Cls.static_helper(...)`: reaches a member, builds no Cls
        for n in walk(f.tree):
            if id(n) in quiet:
                continue
            if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load):
                return None
            if isinstance(n, ast.Attribute) and n.attr == name and isinstance(n.ctx, ast.Load):
                return None
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and (
                    n.value == name or n.value.endswith(("." + name, ":" + name))):
                return None
    if not subclasses:
        return None
    return (f"`{name}.{method}` runs for no object the client builds: every client subclass of `{name}` overrides "
            f"`{method}` ({', '.join(sorted(subclasses)[:3])}) and the client never builds a `{name}` itself")


def _last_name(node: ast.expr) -> str | None:
    node = node.value if isinstance(node, ast.Subscript) else node
    return node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None
