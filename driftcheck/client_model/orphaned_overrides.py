"""Methods of client classes on vLLM bases that nothing calls on the target, chiefly overrides the target orphans.

vllm-plugin-FL's `FusedMoEFL(FusedMoE)` overrides `select_experts`, which an older vLLM's FusedMoE had and called. By
0.19.0 FusedMoE has no such method: routing goes through `self.router.select_experts(...)`, on a router object, and
the plugin calls its own method nowhere. The override never runs, so what it customises silently stops (DC117 says
so, where the client's own vLLM shows it was an override), and its body's reads of members the new FusedMoE lacks
never fail (a "dead" guard: they are warnings, not errors; batch 25b's MB3).

A method counts only when all of these hold:
- it is a plain method of a top-level client class with vLLM bases (no decorator but `@override`,
  `@torch.no_grad()`, `@torch.inference_mode()`, `@staticmethod`, `@classmethod`; no dunder);
- the target finds it on none of those bases, nor on the external bases whose members driftcheck knows (a
  `torch.nn.Module` hook still runs);
- no other line of its file and no other client file reads it as an attribute or holds it as a string (a bare
  name outside the class is a function of that module, never the method);
- every mention of the name in the target's sources is vLLM's own `def`, or an attribute read on a receiver typed
  as a vLLM class that is not in the client class's MRO (`self.router.select_experts(...)`, `self.m()` in an
  unrelated class): a string (a `getattr`), an untyped receiver, a Protocol or an external class may be the
  client's object, and so may any of a name more than MAX_FILES files mention;
- and it is one of vLLM's hooks: the client's own vLLM (the baseline, when it is another release) finds it on one of
  those bases, as vLLM's own method (an orphaned override, which DC117 reports), or the target calls a method of that
  name on other classes' objects (the hook moved there; SB2 in dead_methods.py covers private names vLLM never calls),
  or the method calls `super().<its own name>(...)`, written as an override, and no file of the target calls a method
  of that name at all (JC3).
"""

from __future__ import annotations

import ast
import bisect
import itertools
import weakref
from dataclasses import dataclass

from driftcheck.astnodes import dotted_name, nodes_of
from driftcheck.client_model.client_classes import vllm_bases_through
from driftcheck.client_model.guards import body_span
from driftcheck.vllm_model.bodies import text_index_for
from driftcheck.vllm_model.facts import mro_defines_any
from driftcheck.vllm_model.receivers import files_calling, receiver_classes
from driftcheck.vllm_model.resolved import Missing, Resolved
from driftcheck.sources.sources import module_name_for

_PASSIVE_DECORATORS = ("override", "no_grad", "inference_mode",  # they neither register nor rename a method
                       "property",  # a hook vLLM reads as an attribute (a connector's `prefer_cross_layer_blocks`, 26b VB3)
                       "staticmethod", "classmethod")  # a backend's `get_kv_cache_shape` is one (23a's M1)
MAX_FILES = 40  # vLLM files naming the method read at most (DC109 reads up to 80 files of calls of one override)


@dataclass(frozen=True)
class Orphan:
    rel: str  # the client file
    cls: str  # the client class
    method: str
    line: int  # its `def`
    col: int  # 1-based, as findings count
    body: tuple[int, int]
    base: str  # the vLLM class whose method it overrode, as the baseline has it ("" when no baseline shows one)
    base_path: str  # the baseline's definition
    base_line: int
    baseline_version: str
    called_on: tuple[str, str, int] | None = None  # one call vLLM still makes of the name: (receiver's class, file, line)
    gained: tuple[str, ...] = ()  # methods the base class has now that the baseline's had not (where the hook may be)

    @property
    def overrode(self) -> bool:
        """Whether the client's own vLLM shows it was an override (DC117 reports only those)."""
        return bool(self.base)

    def describe(self) -> str:
        now = (f"vLLM calls `{self.method}` only on `{self.called_on[0].rsplit('.', 1)[-1]}` objects now (as at "
               f"{self.called_on[1]}:{self.called_on[2]})") if self.called_on else ""
        if not self.overrode:
            return (f"`{self.cls}.{self.method}` is a method no client code calls and this vLLM does not call on the "
                    f"client's objects: its vLLM bases do not define it, and "
                    f"{now or f'no file of this vLLM calls a method named `{self.method}`'}")
        short = self.base.rsplit(".", 1)[-1]
        return (f"`{self.cls}.{self.method}` overrides `{short}.{self.method}` of the client's vLLM "
                f"{self.baseline_version}, which this vLLM neither defines on `{short}` nor calls on the client's "
                f"objects{' (' + now + ')' if now else ''}, and no client code calls it")


def orphaned_overrides(files, api, baseline, usage, source) -> list[Orphan]:
    """Every method of a client class on vLLM bases that nothing calls on the target, in file order: an override the
    target orphans (the client's own vLLM, `baseline`, has it on the base), or a method named as one vLLM now calls
    only on other classes' objects (`baseline` the target itself, or none)."""
    asked = (source, api, baseline)
    last = _LAST.get("answer")
    if last is not None and last[1] == id(files) and all(ref() is obj for ref, obj in zip(last[0], asked)):
        return last[2]  # asked again in this process: the dead-code guards first, then DC117
    out = _orphans(files, api, baseline, usage, source)
    _LAST["answer"] = (tuple(_ref(obj) for obj in asked), id(files), out)
    return out


# the last answer: (weak references to the client source, target and baseline it was asked of, the id of the file
# list, which the source holds while it lives, and the answer); a bare id of a target could be reused by the next one
_LAST: dict = {}


def _ref(obj):
    return weakref.ref(obj) if obj is not None else (lambda: None)


def _orphans(files, api, baseline, usage, source) -> list[Orphan]:
    compare = baseline if baseline is not None and baseline.version != api.version else None
    out: list[Orphan] = []
    for f in files:
        mentions = None
        for cls in f.tree.body:
            if not isinstance(cls, ast.ClassDef):
                continue
            methods = [fn for fn in cls.body if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) and fn.body
                       and not (fn.name.startswith("__") and fn.name.endswith("__")) and _passive(fn)]
            bases = vllm_bases_through(usage, api, [f"{f.module}.{cls.name}"]) if methods else []
            for fn in methods if bases else ():
                if not all(isinstance(api.class_member(b, fn.name), Missing) for b in bases):
                    continue  # still an override on the target (or not known to be gone)
                prop = any(dotted_name(d) == "property" for d in fn.decorator_list)
                old = _overridden_in(compare, bases, fn.name, prop) if compare is not None else None
                uncalled = old is None and not files_calling(api, text_index_for(api), fn.name)
                if uncalled and not (_extends_its_base(fn) and all(mro_defines_any(api, b, (fn.name,)) is False
                                                                   for b in bases)):
                    # neither the client's vLLM nor a call in the target says it is one of vLLM's hooks; nor is it an
                    # override of a name its bases lack, read whole (a base outside vLLM may call it: SB2's rule)
                    continue
                if mentions is None:
                    mentions = name_mentions(f.tree)
                if _mentioned_outside(mentions, f.tree, cls, fn) or _member_elsewhere(source, f, fn.name):
                    continue  # the client names it outside its own body: it may be called
                # a method that calls `super().<its own name>(...)` was written as an override of vLLM's; where no
                # vLLM file calls that name at all, nothing does (JC3: vllm-ascend 0.23.0's
                # `NPUModelRunner.postprocess`, a hook vLLM 0.23.0's GPUModelRunner has not)
                mro = {c.qualname for b in bases for c in api.mro(b)[0]}
                others = [] if uncalled else _other_receivers(api, mro, fn.name)  # the dearest: parses vLLM's files
                if others is None or (old is None and not others and not uncalled):
                    continue  # vLLM may call it on the client's object; or calls it on nothing typed
                called_on = others[0] if others else None
                if old is None:
                    out.append(Orphan(f.rel, cls.name, fn.name, fn.lineno, fn.col_offset + 1, body_span(fn.body),
                                      "", "", 0, "", called_on))
                else:
                    out.append(Orphan(f.rel, cls.name, fn.name, fn.lineno, fn.col_offset + 1, body_span(fn.body),
                                      old.owner.qualname, old.path, old.line, compare.version or "?", called_on,
                                      _gained(api, old.owner, fn.name)))
    return out


def _extends_its_base(fn) -> bool:
    """Whether the method calls its own name through `super()`: written as an override of a base's method."""
    return any(isinstance(c.func, ast.Attribute) and c.func.attr == fn.name and isinstance(c.func.value, ast.Call)
               and isinstance(c.func.value.func, ast.Name) and c.func.value.func.id == "super"
               for c in nodes_of(fn, ast.Call))


def _passive(fn) -> bool:
    for d in fn.decorator_list:
        target = d.func if isinstance(d, ast.Call) else d
        name = target.attr if isinstance(target, ast.Attribute) else target.id if isinstance(target, ast.Name) else ""
        if name not in _PASSIVE_DECORATORS:
            return False
    return True


MAX_GAINED = 4  # more new methods than this name no likely new home for the hook


def _gained(api, old_owner: Resolved, name: str) -> tuple[str, ...]:
    """The methods the target's class of that name defines and the baseline's did not, public ones only (or private
    ones too, for a private hook), when there are few enough to suggest where the hook went."""
    now = api.resolve(old_owner.qualname)
    if not (isinstance(now, Resolved) and now.kind == "class" and now.cls is not None and old_owner.cls is not None):
        return ()
    new = sorted(m for m in set(now.cls.methods) - set(old_owner.cls.methods)
                 if not m.startswith("__") and (name.startswith("_") or not m.startswith("_")))
    return tuple(new) if 0 < len(new) <= MAX_GAINED else ()


_MENTIONS: "weakref.WeakKeyDictionary[ast.Module, dict[bool, dict[str, list[int]]]]" = weakref.WeakKeyDictionary()


def name_mentions(tree: ast.Module, bare: bool = False) -> dict[str, list[int]]:
    """Name -> the lines where the file reads it as an attribute or holds it as a string (and, with `bare`, uses it
    as a bare name): what may call a method. Not `super().name`: that reaches a method of that name only from a
    method of the same name below it, which itself runs only where something else names it (vllm-omni's three
    `get_dummy_processor_inputs` overrides, each calling `super()`'s, which vLLM 0.34.0 has not). Made once per
    tree (read-only to callers): `_member_elsewhere` asks it of every file holding a candidate's name, which on
    vLLM 0.16.0's own tree as a client was 1,412 tables for 1,051 questions."""
    kept = _MENTIONS.setdefault(tree, {})
    if bare not in kept:
        kept[bare] = _name_mentions(tree, bare)
    return kept[bare]


def _name_mentions(tree: ast.Module, bare: bool) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    kinds = (ast.Attribute, ast.Name, ast.Constant) if bare else (ast.Attribute, ast.Constant)
    for node in nodes_of(tree, *kinds):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Call) \
                and isinstance(node.value.func, ast.Name) and node.value.func.id == "super":
            continue
        name = node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else \
            node.value if isinstance(node.value, str) else None
        if name is not None:
            out.setdefault(name, []).append(node.lineno)
    return out


def _mentioned_outside(mentions: dict[str, list[int]], tree: ast.Module, cls: ast.ClassDef, fn) -> bool:
    """Whether the file names the method outside its own lines: as an attribute or a string anywhere, or as a bare
    name in its class's body (`alias = method`). A bare name elsewhere is a function of the module, never the method."""
    start, end = fn.lineno, fn.end_lineno or fn.lineno
    if any(not start <= line <= end for line in mentions.get(fn.name, ())):
        return True
    first, last = cls.lineno, cls.end_lineno or cls.lineno
    return any(first <= line <= last and not start <= line <= end for line in _bare_names(tree).get(fn.name, ()))


_BARE: "weakref.WeakKeyDictionary[ast.Module, dict[str, list[int]]]" = weakref.WeakKeyDictionary()


def _bare_names(tree: ast.Module) -> dict[str, list[int]]:
    """Name -> the lines of the file's bare-name nodes of it, made once per tree (every candidate method of a file
    went through all of its names)."""
    if tree not in _BARE:
        out: dict[str, list[int]] = {}
        for n in nodes_of(tree, ast.Name):
            out.setdefault(n.id, []).append(n.lineno)
        _BARE[tree] = out
    return _BARE[tree]


def _member_elsewhere(source, file, name: str) -> bool:
    """Another client file (importing vLLM or not) reads the name as an attribute or holds it as a string; its
    bare names are its own functions (vllm-plugin-FL's vendor module `select_experts(...)`, a function beside the
    `FusedMoEFL.select_experts` override)."""
    others = (f for f in source.files if f is not file and name in f.text)
    for f in itertools.chain(others, source.other_files(containing=name)):
        if name in name_mentions(f.tree):
            return True
    return False


def _overridden_in(baseline, bases: list[Resolved], name: str, prop: bool = False) -> Resolved | None:
    """The baseline's method `name` on the first of `bases` (named as the target names them) that has one of vLLM's;
    for a `@property` override (`prop`), vLLM's property (read as an attribute) too."""
    for b in bases:
        old_cls = baseline.resolve(b.qualname)
        if not (isinstance(old_cls, Resolved) and old_cls.kind == "class" and old_cls.cls is not None):
            continue
        member = baseline.class_member(old_cls, name)
        if isinstance(member, Resolved) and member.kind in (("method", "attribute") if prop else ("method",)) \
                and member.owner is not None:
            return member
    return None


def _other_receivers(api, mro: set[str], name: str) -> list[tuple[str, str, int]] | None:
    """None when some mention of `name` in the target's sources may call it on an object of the client's class; else
    the calls vLLM makes of it on other classes' objects: (the receiver's class, file, line)."""
    others: list[tuple[str, str, int]] = []
    files = text_index_for(api).files_mentioning(name)
    if len(files) > MAX_FILES:
        return None  # a name that common is called on untyped objects somewhere: not worth reading every file
    for rel in files:
        tree = api.parse(rel)
        if tree is None:
            return None
        module = module_name_for(rel)
        mod = api.module(module)
        classes = [(n.lineno, n.end_lineno or n.lineno, n.name) for n in tree.body if isinstance(n, ast.ClassDef)]
        functions = sorted(((n.lineno, n.end_lineno or n.lineno, n)
                            for n in nodes_of(tree, ast.FunctionDef, ast.AsyncFunctionDef)), key=lambda t: t[0])
        starts = [s for s, _e, _n in functions]
        for node in nodes_of(tree, ast.Attribute, ast.Constant):
            if isinstance(node, ast.Constant):
                if node.value == name:
                    return None  # `getattr(obj, "name")`, a table of method names: any object
                continue
            if node.attr != name:
                continue
            line = node.lineno
            cls_name = next((c for s, e, c in classes if s <= line <= e), None)
            scope = api.resolve(f"{module}.{cls_name}") if cls_name and mod is not None else None
            scope = scope if isinstance(scope, Resolved) and scope.kind == "class" else None
            recv = node.value
            if isinstance(recv, ast.Call) and isinstance(recv.func, ast.Name) and recv.func.id == "super":
                if scope is None or scope.qualname in mro:
                    return None
                continue  # `super().name(...)` in a class the client's object is not
            fn = _innermost(functions, starts, line)
            typed = receiver_classes(api, mod, scope, fn, recv) if mod is not None else []
            if not typed or any(not (isinstance(t, Resolved) and t.kind == "class") or t.qualname in mro
                                or api.is_protocol(t) for t in typed):
                return None
            others.append((typed[0].qualname, rel, line))
    return others


def _innermost(functions: list, starts: list[int], line: int):
    """The innermost function whose lines hold `line` (the latest-starting one that does)."""
    i = bisect.bisect_right(starts, line)
    while i > 0:
        i -= 1
        start, end, node = functions[i]
        if start <= line <= end:
            return node
    return None
