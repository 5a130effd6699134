"""DC114 abstract-method-missing: a client class built on a vLLM abstract base lacks a method the target makes abstract.

vLLM's plugin interfaces are abstract base classes (`abc.ABC`): attention backends and their impls and metadata
builders, KV connectors, platform interfaces. A release that adds an `@abstractmethod` to one (or splits one, as
0.16.0's `MLAAttentionImpl` split `forward` into `forward_mha` and `forward_mqa`) makes every out-of-tree subclass
that does not define it impossible to build: `TypeError: Can't instantiate abstract class AscendMLAImpl with
abstract methods forward_mha, forward_mqa`, raised where vLLM builds the class (the backend's impl, the connector
factory), after the plugin has loaded and before any request.

For each client class that derives from a vLLM class whose metaclass is `ABCMeta` (through `abc.ABC` or
`metaclass=ABCMeta`), the rule takes the names the target declares `@abstractmethod` anywhere in its vLLM bases'
MRO, less every name some class of the MRO defines without the decorator (a method, a class attribute, a field)
and every name the client's class or a client class it derives from defines in its body (methods, class
attributes, nested classes, in any branch of the body). A name left over is missing. It reports:
- an error when the vLLM the client was written for (its declared requirement) has every one of those names
  defined for the same class: it could be built there and cannot be here;
- a warning when there is no such vLLM to compare with and the client builds the class itself (`Name(...)` in
  its files); nothing when neither says the class is built.
It says nothing of:
- a class with a base from a package it does not read (a third-party mixin may define the method), or with a
  `metaclass=`;
- a class another client class derives from, unless the client also builds it itself;
- a class that declares abstract methods itself (a base, not built);
- a class whose methods the client copies onto other classes (a patch's source);
- a class whose missing methods are all static or class methods (an interface of classes used as classes, as vLLM's
  `AttentionBackend` is: nothing instantiates them), unless the client builds it itself (31c M2: NeMo's
  `MyTokenizerGroup(BaseTokenizerGroup)`, whose base gained the abstract classmethod `from_config` in 0.5.3);
- a class the client already could not build on its own vLLM;
- a class whose vLLM file the client ships a diff for.
It is a whole-client rule: whether a class is a base or is built is read from every client file. No fix: the method
to add is the client's to write (the message names it and where the target declares it).
"""

from __future__ import annotations

import ast
import re

from driftcheck.client_model.client_classes import (built_by_the_client, client_ancestry, client_class, grafted_class,
                                                      vllm_bases_through)
from driftcheck.client_model.source_diffs import changed_files
from driftcheck.client_model.uses import Loc
from driftcheck.rules.context import ScanContext
from driftcheck.rules.findings import Rule
from driftcheck.rules.tbsigs import Signature
from driftcheck.vllm_model.bodies import text_index_for
from driftcheck.vllm_model.resolved import Resolved
from driftcheck.sources.sources import module_name_for

RULE = Rule("DC114", "abstract-method-missing", "Client subclass of a vLLM abstract class lacks a method the target "
            "makes abstract", "error", kind="behaviour", raises=("TypeError",), baseline=True,
            whole_client=True)  # whether a class is a base or is built is read from every client file

# bases outside vLLM that neither define methods a subclass would inherit nor change how it is built
_PLAIN_EXTERNALS = frozenset({"builtins.object", "abc.ABC", "typing.Generic", "typing.Protocol",
                              "typing_extensions.Protocol", "torch.nn.Module"})


# bases a client class may name that add no methods (the ABC machinery, typing's generics)
_PLAIN_BASES = frozenset({"object", "ABC", "Generic", "Protocol"})


def _abstract(decorators) -> bool:
    return any(str(d).rsplit(".", 1)[-1] in ("abstractmethod", "abstractproperty") for d in decorators)


def _body_names(body: list[ast.stmt]) -> tuple[set[str], set[str]]:
    """(names the class body defines, those of them it declares abstract), through its `if`/`try`/`with` blocks."""
    defined: set[str] = set()
    abstract: set[str] = set()
    for stmt in body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            defined.add(stmt.name)
            if _abstract(ast.unparse(d) for d in stmt.decorator_list):
                abstract.add(stmt.name)
        elif isinstance(stmt, ast.ClassDef):
            defined.add(stmt.name)
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            if not isinstance(stmt, ast.AnnAssign) or stmt.value is not None:
                defined |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
        elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
            defined |= {(a.asname or a.name).split(".")[0] for a in stmt.names}
        else:
            for block in ("body", "orelse", "finalbody", "handlers"):
                inner = getattr(stmt, block, None)
                if isinstance(inner, list):
                    sub = [s for h in inner for s in h.body] if block == "handlers" else inner
                    more, more_abstract = _body_names(sub)
                    defined |= more
                    abstract |= more_abstract
    return defined, abstract


def _derived_from(ctx: ScanContext) -> set[str]:
    """The names of the classes the client's vLLM-importing files derive classes from, by their last part (a class
    reached through a module that re-exports it has a longer label than its own: the name alone keeps every base
    out, and a same-named class too)."""
    return {ast.unparse(b).rsplit(".", 1)[-1].split("[")[0] for f in ctx.client.files for n in f.tree.body
            if isinstance(n, ast.ClassDef) for b in n.bases}


def _a_base(ctx: ScanContext, name: str) -> bool:
    """Whether a client class derives from a class called `name`: in a file importing vLLM, or in one that does not
    (read only for a class that would be reported)."""
    if name in ctx.once(_derived_from):
        return True
    pattern = re.compile(rb"^[ \t]*class\s+\w+\s*\([^)]*\b" + re.escape(name.encode()) + rb"\b", re.M)
    return next(iter(ctx.client.other_files(containing=name, matching=pattern)), None) is not None


def _abc_missing(api, bases: list[Resolved], client_defined: set[str]) -> list[tuple[str, Resolved]] | None:
    """[(name, the vLLM class declaring it abstract)]: the abstract names of `bases` that no class of their MRO defines
    otherwise and the client does not define; none when no base is built by ABCMeta (an @abstractmethod then stops no
    one); None when a base is not read (nothing can be said)."""
    declared: dict[str, Resolved] = {}
    concrete: set[str] = set()
    abc_meta = False
    for base in bases:
        order, is_open, externals = api.mro(base)
        if is_open or not set(externals) <= _PLAIN_EXTERNALS:
            return None
        abc_meta = abc_meta or bool({"abc.ABC", "typing.Protocol", "typing_extensions.Protocol"} & set(externals)) or any(
            "ABCMeta" in c.cls.class_kwargs.get("metaclass", "") for c in order if c.cls is not None)
        for c in order:
            ci = c.cls
            if ci is None or ci.dynamic_attrs:
                return None
            for name, fn in ci.methods.items():
                if _abstract(fn.decorators):
                    declared.setdefault(name, c)
                else:
                    concrete.add(name)
            concrete |= set(ci.class_attrs) | {f.name for f in ci.fields}
    if not abc_meta:
        return []
    return [(n, c) for n, c in declared.items() if n not in concrete and n not in client_defined]


def _used_as_a_class(missing: list[tuple[str, Resolved]]) -> bool:
    """Every missing name is a static or class method: an interface of classes handed around as classes (vLLM's
    `AttentionBackend`: `backend.get_impl_cls()`), which nothing instantiates; a call of one runs the base's body
    instead, a different failure this rule does not claim."""
    return all(any(d.rsplit(".", 1)[-1] in ("staticmethod", "classmethod") for d in c.cls.methods[n].decorators)
               for n, c in missing)


def _same_class(api, cls: Resolved) -> Resolved | None:
    """`cls` in another release: the same qualified name, or the one top-level class of that name in its tree (a class
    that moved, as the attention interfaces did from `vllm.attention.backends.abstract` to `vllm.v1.attention.backend`,
    which clients import with a try/except)."""
    found = api.resolve(cls.qualname)
    if isinstance(found, Resolved) and found.kind == "class" and found.cls is not None:
        return found
    short = cls.qualname.rsplit(".", 1)[-1]
    homes = [rel for rel, _line, kind in text_index_for(api).top_level_definitions(short) if kind == "class"]
    if len(homes) != 1:
        return None
    module = module_name_for(homes[0])
    found = api.resolve(f"{module}.{short}")
    return found if isinstance(found, Resolved) and found.kind == "class" and found.cls is not None else None


def check(ctx: ScanContext):
    for file in ctx.usage.files:
        for node in file.tree.body:
            if not isinstance(node, ast.ClassDef) or any(k.arg == "metaclass" for k in node.keywords):
                continue
            label = f"{file.module}.{node.name}"
            bases = vllm_bases_through(ctx.usage, ctx.api, [label])
            defined = _defined_up_from(ctx, label) if bases else None
            missing = _abc_missing(ctx.api, bases, defined) if defined is not None else None
            changed = changed_files(ctx.client.tree, ctx.api.tree)
            if missing and any(c.path in changed for _n, c in missing):
                continue  # a diff the client ships for the vLLM file may define the method
            if not missing or grafted_class(ctx.usage, label):
                continue
            built = built_by_the_client(ctx.client, file.module, node.name)
            if (_used_as_a_class(missing) or _a_base(ctx, node.name)) and not built:
                continue  # a base, or a class of classes, the client does not build itself (31c M2: one it builds, whose
                # base gained an abstract classmethod, `BaseTokenizerGroup.from_config` in 0.5.3, cannot be built)
            found = _finding(ctx, file, node, bases, defined, missing)
            if found is not None:
                yield found


def _defined_up_from(ctx: ScanContext, label: str) -> set[str] | None:
    """The names the client class `label` and the client classes it derives from define in their bodies; None when
    one of them is not read, has a `metaclass=`, or declares abstract methods itself (a client ABC: a class to derive
    from, not to build)."""
    defined: set[str] = set()
    lineage = client_ancestry(ctx.usage, [label])
    known = {k.rsplit(".", 1)[-1] for k in lineage} | _PLAIN_BASES | \
        {v.rsplit(".", 1)[-1] for k in lineage for v in ctx.usage.client_vllm_bases.get(k, ())}
    for key in lineage:
        found = client_class(ctx.client, key)
        node = found[1] if found else None
        if node is None or any(k.arg == "metaclass" for k in node.keywords):
            return None
        if any(ast.unparse(b).split("[")[0].rsplit(".", 1)[-1] not in known for b in node.bases):
            return None  # a base from a package driftcheck does not read may define the method
        names, abstract = _body_names(node.body)
        if abstract:
            return None
        defined |= names
    return defined


def _finding(ctx: ScanContext, file, node: ast.ClassDef, bases: list[Resolved], defined: set[str], missing: list):
    names = sorted(n for n, _c in missing)
    shown = ", ".join(f"`{n}`" for n in names)
    first_name, declaring = min(missing, key=lambda m: m[0])
    where = ctx.api.class_member(declaring, first_name)
    vllm = ctx.location_of(where) if isinstance(where, Resolved) else ctx.location_of(declaring)
    owners = ", ".join(dict.fromkeys(f"`{c.qualname.rsplit('.', 1)[-1]}`" for _n, c in missing))
    baseline = ctx.baseline()
    if baseline is not None and baseline.version == ctx.api.version:
        return None  # the client's own vLLM: the class could not be built there either
    old_bases = [_same_class(baseline, v) for v in bases] if baseline is not None else []
    if baseline is not None and all(b is not None for b in old_bases):
        before = _abc_missing(baseline, old_bases, defined)
        if before is None or before:
            return None  # it could not be built on the client's own vLLM either: a base, not drift
        severity = "error"
        then = f" On vLLM {baseline.version}, which the client declares, it had every abstract method defined."
    elif built_by_the_client(ctx.client, file.module, node.name):
        severity = "warning"
        then = (" The client builds it, and " + (f"the class it derives from is not found in vLLM {baseline.version}, "
                "which the client declares" if baseline is not None else "the client declares no vLLM") +
                " to tell whether it could build it before: a warning.")
    else:
        return None  # vLLM may build it (a registered plugin class) or nothing may: with nothing to compare, no word
    return ctx.finding(
        RULE, f"`{node.name}` derives from vLLM's {owners}, which declares {shown} abstract in {ctx.version_label()}; "
              f"neither `{node.name}` nor a class it derives from defines {'it' if len(names) == 1 else 'them'}, so "
              f"building it raises TypeError: Can't instantiate abstract class {node.name} with abstract "
              f"method{'s' if len(names) > 1 else ''} {', '.join(names)}.{then}",
        Loc(file.rel, node.lineno, node.col_offset + 1, file.code(node.lineno)), vllm, f"{file.module}.{node.name}",
        when="call", severity=severity, fix=False, missing=names)


SIGNATURES = (
    Signature("a client class derives from a vLLM abstract class that declares a method the client does not define.",
              "vLLM added or split an abstract method of a plugin interface (0.16.0: `MLAAttentionImpl` declares "
              "`forward_mha` and `forward_mqa` where it had `forward`); define it in the client's class.",
              message=r"Can't instantiate abstract class \w+ with(?:out an implementation for)? abstract methods?",
              exc_types=("TypeError",), priority=30),
)
