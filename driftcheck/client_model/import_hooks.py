"""vLLM modules a client maps to its own with an import hook (`builtins.__import__ = hook`).

vllm-kunlun's platform plugin swaps `builtins.__import__` in its `register()` for a function that, for each name of a
dict literal `{"vllm.v1.sample.rejection_sampler": "vllm_kunlun.v1.sample.rejection_sampler", ...}`, imports the
client's module and puts it into `sys.modules` under vLLM's name. From then on `from vllm.v1.sample.rejection_sampler
import RejectionSampler` binds the client's class, wherever the client (or vLLM) imports it. Whether a given import
runs before or after the hook is installed cannot be told, so such a module is one the client ships another copy of
(`Usage.shadowed`, as a copy installed into vLLM's folder is): what its names hold is not known, and a name the
release lacks is `unknown`, naming the hook.

Read: an assignment of a function of the same file to `builtins.__import__` (or `__builtins__.__import__`, or
`setattr(builtins, "__import__", fn)`), and in that function every dict literal whose keys are modules of the
release's package and whose values are string names of modules the client ships.
"""

from __future__ import annotations

import ast

from driftcheck.astnodes import dotted_name, nodes_of, walk

_HOOKS = frozenset({"builtins.__import__", "__builtins__.__import__"})


def import_hook_redirects(client, package: str) -> dict[str, tuple[str, str]]:
    """vLLM module -> (the client file it is mapped to, "file:line" of the hook's installation)."""
    out: dict[str, tuple[str, str]] = {}
    files = [*client.files, *client.other_files(containing="__import__")]
    for f in files:
        if "__import__" not in f.text:
            continue
        functions = {n.name: n for n in f.tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
        for line, name in _installed_hooks(f.tree):
            fn = functions.get(name)
            if fn is None:
                continue
            for module, target in _mappings(fn, package):
                rel = _client_file(client, target)
                if rel is not None:
                    out.setdefault(module, (rel, f"{f.rel}:{line}"))
    return out


def _installed_hooks(tree: ast.Module) -> list[tuple[int, str]]:
    """(line, function name) of each `builtins.__import__ = fn` / `setattr(builtins, "__import__", fn)`."""
    found = []
    for node in nodes_of(tree, ast.Assign, ast.Call):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Name) and \
                any(dotted_name(t) in _HOOKS for t in node.targets):
            found.append((node.lineno, node.value.id))
        elif isinstance(node, ast.Call) and dotted_name(node.func) == "setattr" and len(node.args) == 3 and \
                dotted_name(node.args[0]) in ("builtins", "__builtins__") and \
                isinstance(node.args[1], ast.Constant) and node.args[1].value == "__import__" and \
                isinstance(node.args[2], ast.Name):
            found.append((node.lineno, node.args[2].id))
    return found


def _mappings(fn: ast.AST, package: str):
    """(vLLM module, client module) for each string pair of a dict literal in the hook whose key is in `package`."""
    for node in walk(fn):
        if not isinstance(node, ast.Dict):
            continue
        for k, v in zip(node.keys, node.values):
            if isinstance(k, ast.Constant) and isinstance(k.value, str) and k.value.startswith(package + ".") and \
                    isinstance(v, ast.Constant) and isinstance(v.value, str) and not v.value.startswith(package + "."):
                yield k.value, v.value


def _client_file(client, module: str) -> str | None:
    base = module.replace(".", "/")
    for rel in (f"{base}.py", f"{base}/__init__.py"):
        if client.tree.is_file(rel):
            return rel
    return None
