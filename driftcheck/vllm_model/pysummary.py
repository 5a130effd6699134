"""One module's AST summarised into plain data (module_summary.py), without importing it: the bindings
of its top level (imports, assignments, `__all__`, `TYPE_CHECKING` and try/except blocks), its classes
(class_summary.py) and functions (function_summary.py), a module `__getattr__`'s name map; relative
imports resolved. Summaries are cached by content hash (`SCHEMA`).
"""

from __future__ import annotations

import ast
import dataclasses
import re

from driftcheck import shared_trees
from driftcheck.astnodes import dotted_name, is_type_checking, walk
from driftcheck.vllm_model.class_summary import assigned_names, summarise_class
from driftcheck.vllm_model.function_summary import summarise_function
from driftcheck.vllm_model.module_globals import created_names, globals_calls, hands_out_globals
from driftcheck.vllm_model.module_summary import Binding, GetattrInfo, ModuleInfo


def resolve_relative(module: str, is_package: bool, level: int, target: str | None) -> str:
    """`from ..x import y` inside `module` -> absolute dotted module name."""
    if level == 0:
        return target or ""
    parts = module.split(".")
    if not is_package:
        parts = parts[:-1]
    if level > 1:
        parts = parts[: len(parts) - (level - 1)] if level - 1 <= len(parts) else []
    base = ".".join(parts)
    if target:
        return f"{base}.{target}" if base else target
    return base


# Cheap source-text tests that let a summary skip whole-AST walks that cannot find anything:
# no `dataclass(` call anywhere -> no function wraps dataclass(); no `setattr` -> statements suffice.
_DATACLASS_CALL = re.compile(r"dataclass\s*\(")


_SETS_BY_NAME = re.compile(r"setattr|register_|add_module")  # the calls that create attributes by a computed name


def setattr_lines(source: str) -> list[int]:
    """The lines holding `setattr`, `register_*` or `add_module`: a method whose lines hold none of them makes no
    such call, so its attributes are read from its statements alone (class_summary's `full_walk`)."""
    out: list[int] = []
    line, pos = 1, 0
    for m in _SETS_BY_NAME.finditer(source):
        line += source.count("\n", pos, m.start())
        pos = m.start()
        if not out or out[-1] != line:
            out.append(line)
    return out


class _Summariser:
    def __init__(self, info: ModuleInfo, scan_calls: bool | list[int] = True, setattr_at: list[int] | None = None):
        self.info = info
        self.scan_calls = scan_calls
        self.setattr_at = setattr_at  # setattr_lines(source); None: unknown, every method is walked whole

    def run(self, tree: ast.Module) -> None:
        self._block(tree.body, type_only=False)

    def _bind(self, name: str, binding: Binding) -> None:
        existing = self.info.bindings.get(name)
        # A runtime binding beats one that exists only for type checkers.
        if existing is not None and not existing.type_only and binding.type_only:
            return
        self.info.bindings[name] = binding

    def _block(self, body: list[ast.stmt], type_only: bool) -> None:
        info = self.info
        for node in body:
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname:
                        self._bind(alias.asname, Binding("module-import", node.lineno, alias.name, type_only))
                    else:
                        top = alias.name.split(".")[0]
                        self._bind(top, Binding("module-import", node.lineno, top, type_only))
            elif isinstance(node, ast.ImportFrom):
                module = resolve_relative(info.name, info.is_package, node.level, node.module)
                for alias in node.names:
                    if alias.name == "*":
                        if not type_only:
                            info.star_imports.append(module)
                        continue
                    self._bind(alias.asname or alias.name, Binding("import", node.lineno, f"{module}.{alias.name}", type_only))
            elif isinstance(node, ast.ClassDef):
                info.classes[node.name] = summarise_class(node, info.path, scan_calls=self.scan_calls,
                                                          setattr_at=self.setattr_at)
                self._bind(node.name, Binding("class", node.lineno, type_only=type_only))
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                fn = summarise_function(node, info.path, scan_calls=self.scan_calls)
                if node.name == "__getattr__":
                    info.getattr = _summarise_getattr(node, info)
                if "overload" in fn.decorators or "typing.overload" in fn.decorators:
                    if node.name in info.functions:
                        continue
                info.functions[node.name] = fn
                self._bind(node.name, Binding("function", node.lineno, type_only=type_only))
            elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                self._assignment(node, type_only)
            elif isinstance(node, ast.If):
                if is_type_checking(node.test):
                    self._block(node.body, type_only=True)
                    self._block(node.orelse, type_only=type_only)
                elif _runs_as_script(node.test):
                    # `if __name__ == "__main__": from ... import main`: bound only when the module runs as a script,
                    # never for an importer (29h M1: 0.32.0-0.34.0's openai api_server binds `main` there only)
                    self._block(node.orelse, type_only)
                else:
                    before = dict(self.info.bindings)
                    self._block(node.body, type_only)
                    after_body = dict(self.info.bindings)
                    self._block(node.orelse, type_only)
                    self._note_otherwise(before, after_body)
            elif isinstance(node, ast.Try) or type(node).__name__ == "TryStar":
                before = dict(self.info.bindings)
                self._block(node.body, type_only)
                normal = {k: v for k, v in self.info.bindings.items() if before.get(k) is not v}
                for handler in node.handlers:
                    self._block(handler.body, type_only)
                # `try: from opentelemetry.trace import Tracer / except ImportError: class Tracer: ...`: the
                # handler's definition is a fallback; the try body's binding is what a normal install has.
                for name, binding in normal.items():
                    handler_binding = self.info.bindings.get(name)
                    if handler_binding is not binding and handler_binding is not None:
                        binding.fallback = handler_binding
                    elif handler_binding is None or handler_binding is binding:
                        binding.optional = bool(node.handlers)
                    self.info.bindings[name] = binding
                self._block(node.orelse, type_only)
                self._block(node.finalbody, type_only)
            elif isinstance(node, ast.With):
                self._block(node.body, type_only)

    def _note_otherwise(self, before: dict, after_body: dict) -> None:
        """A name one branch of an `if` rebinds holds the other branch's value, or its earlier one, when that branch is
        not taken: vLLM 0.8-0.10's `class LLMEngine` then `if envs.VLLM_USE_V1: LLMEngine = V1LLMEngine`."""
        for name, binding in self.info.bindings.items():
            if before.get(name) is binding or binding.otherwise is not None:
                continue
            in_body = after_body.get(name)
            other = before.get(name) if binding is in_body or in_body is before.get(name) else in_body
            if other is not None and other is not binding:
                # a copy without its own links: a chain of `if`s would nest every earlier binding, and an `if` in an
                # `except` handler would loop back through the try body's `fallback`
                binding.otherwise = dataclasses.replace(other, otherwise=None, fallback=None)

    def _assignment(self, node: ast.stmt, type_only: bool) -> None:
        info = self.info
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign):
            targets, value = [node.target], node.value
            if isinstance(node.target, ast.Name):
                info.annotations[node.target.id] = ast.unparse(node.annotation)
        else:  # AugAssign: `__all__ += [...]`
            if isinstance(node.target, ast.Name) and node.target.id == "__all__":
                names = _string_list(node.value)
                if names is not None:
                    info.all_names = (info.all_names or []) + names
            return
        for target in targets:
            for name_node in assigned_names(target):
                name = name_node.id
                if name == "__all__":
                    names = _string_list(value) if value is not None else None
                    if names is not None:
                        info.all_names = names
                    # a module attribute like any other (`configs.__all__.append(...)`, HA), whatever its value is
                    self._bind(name, Binding("assign", node.lineno, "", type_only))
                    continue
                kind, expr, builds = "assign", "", ""
                if isinstance(value, (ast.Name, ast.Attribute)) and isinstance(target, ast.Name):
                    kind, expr = "alias", dotted_name(value) or ""
                elif isinstance(value, ast.Call) and target is name_node and len(targets) == 1 \
                        and name not in info.bindings:  # bound here first: a module-level instance (FC2)
                    builds = dotted_name(value.func) or ""
                elif type(value) in _LITERAL_TYPES and target is name_node and len(targets) == 1 \
                        and name not in info.bindings:  # a literal is built by its type (`QUANTIZATION_METHODS = [...]`)
                    builds = _LITERAL_TYPES[type(value)]
                if isinstance(value, ast.Dict) and isinstance(target, ast.Name):
                    mapping = _string_dict(value)
                    if mapping is not None:
                        info.dicts[name] = mapping
                elif value is not None and isinstance(target, ast.Name):
                    members = _string_collection(value)
                    if members is not None:  # `_LAZY = frozenset({"warmup"})`, for `if name in _LAZY:` (QE3)
                        info.dicts[name] = dict.fromkeys(members, "")
                self._bind(name, Binding(kind, node.lineno, expr, type_only, builds=builds))


def _runs_as_script(test: ast.expr) -> bool:
    """`__name__ == "__main__"` (either way round)."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)):
        return False
    sides = [test.left, test.comparators[0]]
    return any(isinstance(n, ast.Name) and n.id == "__name__" for n in sides) and \
        any(isinstance(n, ast.Constant) and n.value == "__main__" for n in sides)


_LITERAL_TYPES = {ast.List: "list", ast.ListComp: "list", ast.Dict: "dict", ast.DictComp: "dict", ast.Set: "set",
                  ast.SetComp: "set", ast.Tuple: "tuple"}


def _string_list(node: ast.expr) -> list[str] | None:
    if isinstance(node, (ast.List, ast.Tuple)):
        out = []
        for elt in node.elts:
            if isinstance(elt, ast.Constant) and isinstance(elt.value, str):
                out.append(elt.value)
        return out
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _string_list(node.left), _string_list(node.right)
        if left is not None and right is not None:
            return left + right
    return None


def _string_collection(node: ast.expr) -> list[str] | None:
    """The strings of a literal list, tuple or set of strings, or of `frozenset(...)` / `set(...)` / `tuple(...)` over one;
    None for anything else (an element that is not a string makes it no name list)."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("frozenset", "set", "tuple", "list") \
            and len(node.args) == 1 and not node.keywords:
        node = node.args[0]
    if not isinstance(node, (ast.List, ast.Tuple, ast.Set)) or not node.elts:
        return None
    if not all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts):
        return None
    return [e.value for e in node.elts]


def _string_dict(node: ast.Dict) -> dict[str, str] | None:
    out: dict[str, str] = {}
    for key, value in zip(node.keys, node.values):
        if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
            return None
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            out[key.value] = value.value
        elif isinstance(value, ast.Tuple) and value.elts and all(
            isinstance(e, ast.Constant) and isinstance(e.value, str) for e in value.elts
        ):
            out[key.value] = ":".join(e.value for e in value.elts)  # ("module", "attr") lazy maps
        else:
            out[key.value] = ""
    return out


def _summarise_getattr(fn: ast.FunctionDef | ast.AsyncFunctionDef, info: ModuleInfo) -> GetattrInfo:
    """Read the lazy-import / deprecated-alias maps served by a module `__getattr__`."""
    result = GetattrInfo(line=fn.lineno)
    param = fn.args.args[0].arg if fn.args.args else "name"
    for sub in walk(fn):
        if isinstance(sub, ast.Compare) and isinstance(sub.left, ast.Name) and sub.left.id == param:
            for op, right in zip(sub.ops, sub.comparators):
                if isinstance(op, ast.Eq) and isinstance(right, ast.Constant) and isinstance(right.value, str):
                    result.names.setdefault(right.value, None)
                elif isinstance(op, ast.In) and isinstance(right, ast.Name) and right.id == "__all__":
                    for exported in info.all_names or ():  # `if name in __all__: return _load(name)` (W_)
                        result.names.setdefault(exported, None)
                elif isinstance(op, ast.In) and isinstance(right, ast.Name):
                    result.names.update({k: ("map:" + v) if v else None for k, v in info.dicts.get(right.id, {}).items()})
                    result.names.setdefault(f"@dict:{right.id}", None)
                    if right.id not in result.served_tables:
                        result.served_tables.append(right.id)
                elif isinstance(op, ast.In) and isinstance(right, (ast.Tuple, ast.List, ast.Set)):
                    for elt in right.elts:
                        if isinstance(elt, ast.Constant) and isinstance(elt.value, str):
                            result.names.setdefault(elt.value, None)
        if isinstance(sub, ast.Call) and (dotted_name(sub.func) or "").endswith("warn"):
            result.deprecated = True
        table = _table_lookup(sub, param, info)
        if table is not None:  # `spec = _EXPORTS.get(name)`: the table's keys, as `name in _EXPORTS` serves them
            result.names.update({k: ("map:" + v) if v else None for k, v in info.dicts[table].items()})
            if table not in result.served_tables:
                result.served_tables.append(table)
    # `if name == "x": from m import x; return x` -> x comes from m.
    for sub in walk(fn):
        if isinstance(sub, ast.If) and isinstance(sub.test, ast.Compare):
            right = sub.test.comparators[0] if sub.test.comparators else None
            if isinstance(right, ast.Constant) and isinstance(right.value, str):
                for inner in walk(ast.Module(body=sub.body, type_ignores=[])):
                    if isinstance(inner, ast.ImportFrom):
                        module = resolve_relative(info.name, info.is_package, inner.level, inner.module)
                        for alias in inner.names:
                            if (alias.asname or alias.name) == right.value or alias.name == right.value:
                                result.names[right.value] = f"{module}.{alias.name}"
                if result.names.get(right.value) is None:
                    # `if name == "Old": warn(...); return New` with `New` bound at module level (its top-level
                    # `from m import New`): the alias serves that binding, so it lives where `New` does (SA1).
                    served = _returned_module_name(sub.body, fn)
                    if served is not None and served != right.value:
                        result.names[right.value] = f"{info.name}.{served}"
    result.names = {k: v for k, v in result.names.items() if not k.startswith("@dict:")}
    last = fn.body[-1] if fn.body else None
    result.closed = _always_raises(last) or _refuses_all_but_globals(fn, param) or _refuses_unlisted(fn, param, info)
    result.none_otherwise = not result.closed and _falls_through_for_other_names(fn, param)
    # `elif name in globals()` means "anything defined here"; it does not open the module further.
    return result


def _falls_through_for_other_names(fn: ast.FunctionDef | ast.AsyncFunctionDef, param: str) -> bool:
    """Whether a name none of the function's tests names runs off its end (an implicit `return None`): every statement
    is a docstring or an `if` with no `else` whose test is `param == "x"` or `param in ("x", ...)` (vLLM 0.14.0's
    `vllm/transformers_utils/tokenizer.py` keeps only `if name == "get_tokenizer": ... return get_tokenizer`)."""
    body = list(fn.body)
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]
    if not body:
        return False
    for stmt in body:
        if not (isinstance(stmt, ast.If) and not stmt.orelse and isinstance(stmt.test, ast.Compare)):
            return False
        test = stmt.test
        if not (isinstance(test.left, ast.Name) and test.left.id == param and len(test.ops) == 1):
            return False
        right = test.comparators[0]
        literal = lambda node: isinstance(node, ast.Constant) and isinstance(node.value, str)  # noqa: E731
        if isinstance(test.ops[0], ast.Eq) and literal(right):
            continue
        if isinstance(test.ops[0], ast.In) and isinstance(right, (ast.Tuple, ast.List, ast.Set)) and all(map(literal, right.elts)):
            continue
        return False
    return True


def _returned_module_name(body: list[ast.stmt], fn: ast.FunctionDef | ast.AsyncFunctionDef) -> str | None:
    """The name a branch of a module `__getattr__` returns, when it is the module's own (bound nowhere in the
    function: no assignment, import, loop or `global` there), else None."""
    last = body[-1] if body else None
    if not (isinstance(last, ast.Return) and isinstance(last.value, ast.Name)):
        return None
    name = last.value.id
    for node in walk(fn):
        if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, (ast.Store, ast.Del)):
            return None
        if isinstance(node, (ast.Import, ast.ImportFrom)) and any((a.asname or a.name.split(".")[0]) == name for a in node.names):
            return None
        if isinstance(node, (ast.Global, ast.Nonlocal)) and name in node.names:
            return None
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node is not fn and node.name == name:
            return None
    if name in {a.arg for a in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs)}:
        return None
    return name


def _always_raises(stmt: ast.stmt | None) -> bool:
    if stmt is None:
        return False
    if isinstance(stmt, ast.Raise):
        return True
    if isinstance(stmt, ast.If):
        return bool(stmt.orelse) and _always_raises(stmt.orelse[-1])
    return False


def _table_lookup(node: ast.AST, param: str, info: ModuleInfo) -> str | None:
    """The module-level str-keyed dict `node` looks the parameter up in, `_EXPORTS.get(name)`, else None."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get" \
            and isinstance(node.func.value, ast.Name) and node.func.value.id in info.dicts \
            and len(node.args) == 1 and isinstance(node.args[0], ast.Name) and node.args[0].id == param:
        return node.func.value.id
    return None


def _refuses_unlisted(fn: ast.FunctionDef | ast.AsyncFunctionDef, param: str, info: ModuleInfo) -> bool:
    """The body starts `spec = _EXPORTS.get(name)` then `if spec is None: raise ...` (0.28.0's `vllm/utils/humming.py`,
    30b U2): a name the table lacks gets no further."""
    body = fn.body[1:] if fn.body and isinstance(fn.body[0], ast.Expr) and isinstance(fn.body[0].value, ast.Constant) \
        else fn.body
    if len(body) < 2 or not (isinstance(body[0], ast.Assign) and len(body[0].targets) == 1
                             and isinstance(body[0].targets[0], ast.Name) and _table_lookup(body[0].value, param, info)):
        return False
    spec, test = body[0].targets[0].id, body[1].test if isinstance(body[1], ast.If) else None
    return isinstance(test, ast.Compare) and isinstance(test.left, ast.Name) and test.left.id == spec \
        and len(test.ops) == 1 and isinstance(test.ops[0], ast.Is) and isinstance(test.comparators[0], ast.Constant) \
        and test.comparators[0].value is None and not body[1].orelse and _always_raises(body[1].body[-1])


def _refuses_all_but_globals(fn: ast.FunctionDef | ast.AsyncFunctionDef, param: str) -> bool:
    """The body starts `if name not in globals(): raise ...` (0.34.0's transformers backend package): only a name the
    module already binds gets past it, so it serves no other name."""
    body = fn.body[1:] if fn.body and isinstance(fn.body[0], ast.Expr) and isinstance(fn.body[0].value, ast.Constant) \
        else fn.body
    first = body[0] if body else None
    if not (isinstance(first, ast.If) and not first.orelse and first.body and _always_raises(first.body[-1])):
        return False
    test = first.test
    return isinstance(test, ast.Compare) and isinstance(test.left, ast.Name) and test.left.id == param \
        and len(test.ops) == 1 and isinstance(test.ops[0], ast.NotIn) and isinstance(test.comparators[0], ast.Call) \
        and dotted_name(test.comparators[0].func) == "globals" and not test.comparators[0].args


_GLOBAL_STATEMENT = re.compile(r"(?m)(?:^|;)[ \t]*global[ \t]+\w")


def summarise_source(name: str, path: str, is_package: bool, source: str) -> ModuleInfo:
    info = ModuleInfo(name=name, path=path, is_package=is_package, lines=source.count("\n") + 1)
    try:
        # a file a rule or the client already parsed (a self-scan, DC109's callers) is not parsed again
        tree = shared_trees.live(source) or ast.parse(source, filename=path)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        line = getattr(exc, "lineno", None)
        info.syntax_error = f"{type(exc).__name__}: {getattr(exc, 'msg', exc)}" + (f" (line {line})" if line else "")
        return info
    dataclass_calls, line, at = [], 1, 0
    for m in _DATACLASS_CALL.finditer(source):
        line, at = line + source.count("\n", at, m.start()), m.start()
        dataclass_calls.append(line)
    _Summariser(info, scan_calls=dataclass_calls, setattr_at=setattr_lines(source)).run(tree)
    calls, parents = globals_calls(tree, source) if "globals()" in source else ([], None)
    if calls and hands_out_globals(calls, parents):
        created = created_names(tree, calls, parents)  # the names its globals() uses can write, where they say (W_)
        if created is None:
            info.dynamic_globals = True
        else:
            for name, line in created.items():
                info.bindings.setdefault(name, Binding("assign", line))
    if "global" in source and _GLOBAL_STATEMENT.search(source):  # a function that rebinds a module-level instance:
        # what it holds is not known (FC2); the word alone is in a sixth of vLLM's files, the statement in 3%
        for node in walk(tree):
            if isinstance(node, ast.Global):
                for name in node.names:
                    binding = info.bindings.get(name)
                    if binding is not None and binding.builds:
                        info.bindings[name] = dataclasses.replace(binding, builds="")
    if any(c.dynamic_names for c in info.classes.values()):
        info.identifier_strings = sorted({n.value for n in walk(tree) if isinstance(n, ast.Constant)
                                          and isinstance(n.value, str) and n.value.isidentifier()})
    return info


