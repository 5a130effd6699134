"""Guards one client file puts on another: method bodies another file replaces at import, and modules
loaded only by `import_module` under a vLLM version check (`dispatched_modules`, per-release vendored copies).
"""

from __future__ import annotations

import ast
import re

from driftcheck.astnodes import dotted_name, nodes_of
from driftcheck.client_model.guards import Guard, body_span, guards_of
from driftcheck.vllm_model.pysummary import resolve_relative


def replaced_elsewhere(files) -> dict[str, list[Guard]]:
    """`_module.AXK2MoE.forward = patched` at the top of one client file, for a class defined in one other client
    file (reached through an import or a module loaded by path): that method's original body never runs. Only
    when the assigning file does not read the original first (`orig = _module.AXK2MoE.forward` wraps it)."""
    defined: dict[str, list] = {}
    for f in files:
        for node in f.tree.body:
            if isinstance(node, ast.ClassDef):
                defined.setdefault(node.name, []).append((f, node))
    out: dict[str, list[Guard]] = {}
    for f in files:
        read: set | None = None  # (owner, method) the file reads, computed only for a file that replaces one
        for stmt in f.tree.body:
            for target in stmt.targets if isinstance(stmt, ast.Assign) else []:
                if not isinstance(target, ast.Attribute):
                    continue
                owner = target.value
                cls_name = owner.attr if isinstance(owner, ast.Attribute) else owner.id if isinstance(owner, ast.Name) else None
                homes = defined.get(cls_name or "", [])
                if len(homes) != 1 or homes[0][0] is f:
                    continue
                if read is None:
                    read = {(dotted_name(n.value), n.attr) for n in nodes_of(f.tree, ast.Attribute) if isinstance(n.ctx, ast.Load)}
                if (dotted_name(owner), target.attr) in read:
                    continue
                home, cls = homes[0]
                for fn in cls.body:
                    if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) and fn.name == target.attr and fn.body:
                        start, end = body_span(fn.body)
                        out.setdefault(home.rel, []).append(Guard(start, end, "replaced", frozenset(), stmt.lineno,
                                                                  names=frozenset({fn.name}), where=f"{f.rel}:{stmt.lineno}"))
    return out


def dispatched_modules(files) -> dict[str, Guard]:
    """Client modules loaded only by `import_module(".vendored_v028", __package__)` inside vLLM version checks and
    never imported by name: per-release copies, of which the target runs at most the one for itself. A finding in
    one is a warning at most (the client handles the other releases by not loading it)."""
    loads: dict[str, list[tuple[str, int, bool]]] = {}
    static: set[str] = set()
    for f in files:
        is_package = f.rel.endswith("__init__.py")
        for node in nodes_of(f.tree, ast.Import, ast.ImportFrom):
            if isinstance(node, ast.Import):
                static |= {a.name for a in node.names}
            else:
                base = resolve_relative(f.module, is_package, node.level, node.module)
                static |= {base} | {f"{base}.{a.name}" for a in node.names}
        if not any((dotted_name(c.func) or "").rsplit(".", 1)[-1] == "import_module" for c in nodes_of(f.tree, ast.Call)):
            continue
        # the names it loads: every module-like string of this file (`return ".vendored_v028", "schedule"` from a
        # selector the call uses), each guarded or not by a version check
        version_guards = [g for g in guards_of(f.tree) if g.kind == "version"]
        for const in nodes_of(f.tree, ast.Constant):
            name = const.value if isinstance(const.value, str) else ""
            if "." not in name or not re.fullmatch(r"\.*[A-Za-z_]\w*(?:\.\w+)*", name):
                continue
            level = len(name) - len(name.lstrip("."))
            target = resolve_relative(f.module, is_package, level, name.lstrip("."))
            guarded = any(g.start <= const.lineno <= g.end for g in version_guards)
            loads.setdefault(target, []).append((f.rel, const.lineno, guarded))
    out: dict[str, Guard] = {}
    by_module = {f.module: f for f in files}
    for module, where in loads.items():
        if module in static or module not in by_module or not all(g for _, _, g in where):
            continue
        rel, line, _ = where[0]
        out[by_module[module].rel] = Guard(1, 10 ** 9, "dispatched", frozenset(), line, where=f"{rel}:{line}")
    return out
