"""Methods of a client class that only code which never runs refers to: their bodies never run either.

vllm-plugin-FL's MLA backend binds `self._run_prefill_new_tokens = self._run_prefill_new_tokens_trtllm_ragged` only
under `elif use_trtllm_ragged_deepseek_prefill():`, a helper of the file that returns False (guards.py makes that
branch unreachable). Nothing else names `_run_prefill_new_tokens_trtllm_ragged`: not another line of the file, not
another client file, and not vLLM, whose own copy of the method is on a class the plugin's class does not derive
from. A member read in such a method is read by code that never runs (MB2, batch 25b).

A method counts only when every mention of its name in its file (an attribute, a name, a string) lies inside an
unreachable span of that file, no other client file names it, it has no decorator and is no dunder, and vLLM's sources
name it only as `self.<name>` inside classes that are not among the client class's vLLM bases: vLLM calls a method by
its name, on a receiver that may be the client's object only through such a base (or through any other receiver,
which counts as a caller). Asked only for files that have such a branch, with the other cross-file facts (a
change to another file can bring a method back to life).
"""

from __future__ import annotations

import ast

from driftcheck.astnodes import nodes_of
from driftcheck.client_model.client_classes import vllm_bases_through
from driftcheck.client_model.guards import Guard, body_span, unreachable_branches
from driftcheck.client_model.orphaned_overrides import name_mentions, orphaned_overrides
from driftcheck.vllm_model.bodies import text_index_for
from driftcheck.vllm_model.facts import mro_defines_any
from driftcheck.sources.sources import module_name_for


def dead_methods_of(files, api, usage, source, baseline=None) -> dict[str, list[Guard]]:
    """File -> its dead-method guards, for every client file with a branch that never runs (a flag the file only sets
    false, a helper that only returns false: guards.unreachable_branches), a private method nothing calls, or a method
    nothing calls on the target that is one of vLLM's hooks (with the client's own vLLM as `baseline`, an override the
    target orphans: orphaned_overrides). A cross-file fact: another file naming a method keeps it alive, so it is
    worked out with the other cross-file facts and goes into the units' digest."""
    out: dict[str, list[Guard]] = {}
    for f in files:
        spans = unreachable_branches(f.tree)
        found = dead_methods(f, spans, api, usage, source) if spans else []
        found += uncalled_private_overrides(f, api, usage, source, {g.start for g in found})
        if found:
            out[f.rel] = found
    for o in orphaned_overrides(files, api, baseline, usage, source):
        if all(g.start != o.body[0] for g in out.get(o.rel, ())):
            out.setdefault(o.rel, []).append(Guard(o.body[0], o.body[1], "dead", frozenset(), o.line,
                                                   frozenset({o.method}), where=o.describe()))
    for rel, guards in script_only_bodies(files, source).items():
        out[rel] = [*out.get(rel, ()), *guards]
    return out


def _stem(rel: str) -> str:
    return rel.rsplit("/", 1)[-1].removesuffix(".py")


def script_only_bodies(files, source) -> dict[str, list[Guard]]:
    """File -> "dead" guards over its function and method bodies, for each client file that nothing can load but
    running it as a script, and whose top level, run so, calls none of them (QA2). ViLaVT keeps vLLM 0.8.5's copy of
    its model beside the current one as `vllm_vilavt/qwen2_5_vl_vilavt_v0.8.5.py`: a name with dots is no Python
    identifier, so no `import` (nor `python -m`, nor vLLM's `"module:Class"` registry strings) can load it; only a
    path can, and no file of the client spells its name. Run as a script, its top level only imports, defines and
    registers (decorators hand its classes to vLLM): the bodies run only if its top level calls them, names one of
    its classes or functions outside a decorator, or has a `__main__` block. Its top-level lines are still checked
    (running it as a script runs them)."""
    stems = {f.rel: _stem(f.rel) for f in files if f.rel.endswith(".py") and not _stem(f.rel).isidentifier()}
    if not stems:
        return {}
    named = _stems_named(source, stems)
    out: dict[str, list[Guard]] = {}
    for f in files:
        if f.rel not in stems or stems[f.rel] in named or _top_level_reaches_own(f.tree):
            continue
        where = (f"`{stems[f.rel]}.py` cannot be imported by name (its name is no Python identifier), no client file "
                 "names it, and run as a script its top level calls none of its functions or classes")
        top = {id(node) for node in f.tree.body}  # a top-level function is no method
        out[f.rel] = [Guard(*body_span(fn.body), "dead", frozenset(), fn.lineno, frozenset({fn.name}), where=where,
                            test="function" if id(fn) in top else "")
                      for fn in _defs_with_bodies(f.tree)]
    return out


def _stems_named(source, stems: dict[str, str]) -> set[str]:
    """The stems another file of the client spells (a Python loader by path, a shell script, a README's command), but
    for the lists of packed files in a build's metadata folder."""
    found: set[str] = set()
    wanted = set(stems.values())
    for rel in source.tree.iter_files("", suffix=""):
        if any(part.endswith((".egg-info", ".dist-info")) for part in rel.split("/")[:-1]):
            continue  # a build's list of the files it packed (SOURCES.txt, RECORD) loads none of them
        if not _may_run_a_path(rel):
            continue  # a data file, a weight, an image: read for nothing (a repository may hold gigabytes of them)
        try:
            data = source.tree.read_bytes(rel)
        except Exception:  # unreadable: it names nothing we can see
            continue
        found |= {s for s in wanted if s.encode() in data and stems.get(rel) != s}
        if found == wanted:
            break
    return found


# what may load or run a file by its path: code, scripts, build and CI files, configs, notebooks, docs with commands
_PATH_RUNNERS = (".py", ".pyi", ".sh", ".bash", ".zsh", ".ps1", ".bat", ".cmd", ".yaml", ".yml", ".toml", ".cfg",
                 ".ini", ".mk", ".ipynb", ".md", ".rst", ".txt", ".dockerfile", ".Dockerfile")


def _may_run_a_path(rel: str) -> bool:
    name = rel.rsplit("/", 1)[-1]
    return name.endswith(_PATH_RUNNERS) or "." not in name or name.startswith(("Dockerfile", "Makefile"))


def _defs_with_bodies(tree: ast.Module) -> list:
    """The module's top-level functions and the methods of its top-level classes."""
    out = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out.append(node)
        elif isinstance(node, ast.ClassDef):
            out += [fn for fn in node.body if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) and fn.body]
    return [fn for fn in out if fn.body]


def _top_level_reaches_own(tree: ast.Module) -> bool:
    """Whether the module's top level, run as a script, may call one of its own functions or methods: a `__main__`
    test, or a name of one of its top-level functions or classes outside the defs' bodies, the decorators and the
    bases of its classes, type expressions (`X[...]`) and annotations (a call, an argument, an assignment that hands it
    out), or a class with a metaclass keyword
    or an `__init_subclass__` (run when a class is defined). Class bodies run at definition: they count."""
    own = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
    if _registers_on_own_object(tree):
        return True
    todo: list[ast.AST] = list(tree.body)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue  # a body: runs only when called; its decorators and defaults are left out too
        if isinstance(node, ast.ClassDef):
            if node.keywords or any(isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) and fn.name ==
                                    "__init_subclass__" for fn in node.body):
                return True  # a metaclass or a hook that runs when a subclass is defined
            todo += node.body  # (a base of its own is named, not called: `class QA(Attention)`)
            continue
        if isinstance(node, ast.Subscript):
            todo.append(node.value)  # `Union[PixelInputs, EmbeddingInputs]`: a type written with its classes
            continue
        if isinstance(node, ast.AnnAssign):
            todo += [node.target, *([node.value] if node.value is not None else [])]
            continue
        if isinstance(node, ast.Name) and node.id in own:
            return True
        if isinstance(node, ast.Constant) and node.value == "__main__":
            return True  # `if __name__ == "__main__":`
        todo += list(ast.iter_child_nodes(node))
    return False


def _registers_on_own_object(tree: ast.Module) -> bool:
    """Whether a top-level function or class is decorated through an object the module itself makes at its top level
    (`app = modal.App(...)` then `@app.cls(...)`, `app = FastAPI()` then `@app.get("/")`): the decorator hands it to
    that object, which a runner that loads the file by its path (`modal deploy serve-app.py`, `fastapi run`) finds
    there and calls (batch 20d's R1: advay-modal/vllm-lora's `endpoint-v1.py`). A registry the module imports
    (`@MULTIMODAL_REGISTRY.register_processor(...)`, QA2) is no such object: nothing of the script's own is left for a
    runner to find."""
    made = {t.id for node in tree.body if isinstance(node, (ast.Assign, ast.AnnAssign))
            and isinstance(node.value, ast.Call)
            for t in (node.targets if isinstance(node, ast.Assign) else [node.target]) if isinstance(t, ast.Name)}
    if not made:
        return False
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            for deco in node.decorator_list:
                root = deco.func if isinstance(deco, ast.Call) else deco
                while isinstance(root, ast.Attribute):
                    root = root.value
                if isinstance(root, ast.Name) and root.id in made and root is not deco:
                    return True
    return False


def dead_methods(file, unreachable: list[Guard], api, usage, source) -> list[Guard]:
    """Guards ("dead") over the bodies of `file`'s methods that only its unreachable code refers to."""
    if not unreachable:
        return []
    tree = file.tree
    inside = [(g.start, g.end, g) for g in unreachable]
    mentions: dict[str, list[int]] = {}
    for node in nodes_of(tree, ast.Attribute):
        mentions.setdefault(node.attr, []).append(node.lineno)
    for node in nodes_of(tree, ast.Name):
        mentions.setdefault(node.id, []).append(node.lineno)
    for node in nodes_of(tree, ast.Constant):
        if isinstance(node.value, str) and node.value.isidentifier():
            mentions.setdefault(node.value, []).append(node.lineno)
    out: list[Guard] = []
    for cls in (n for n in tree.body if isinstance(n, ast.ClassDef)):
        for fn in cls.body:
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) or fn.decorator_list or \
                    (fn.name.startswith("__") and fn.name.endswith("__")) or not fn.body:
                continue
            lines = mentions.get(fn.name, [])
            guard = _all_inside(lines, inside)
            if guard is None or _named_elsewhere(source, file, fn.name) or \
                    _vllm_may_call(api, usage, f"{file.module}.{cls.name}", fn.name):
                continue
            start, end = body_span(fn.body)
            out.append(Guard(start, end, "dead", frozenset(), guard.line, frozenset({fn.name}),
                             where=f"`{fn.name}` is named only in code that never runs ({guard.describe()})"))
    return out


def uncalled_private_overrides(file, api, usage, source, done: set[int] = frozenset()) -> list[Guard]:
    """Guards ("dead") over the bodies of private methods of `file`'s classes with a vLLM base that nothing calls on
    the target: the file names the method nowhere outside its own body, no other client file names it, and the
    target's vLLM names it only as `self.<name>` in classes that are not the client class's vLLM bases, whose MROs
    driftcheck reads whole (bases outside vLLM but `object`, `ABC`, `Generic` may call private hooks: `nn.Module`'s
    `_load_from_state_dict`) and define no method of that name (SB2).

    DeepSpec's `MooncakeHiddenStatesConnector(ExampleHiddenStatesConnector)` overrides `_submit_async_write`, whose
    body reads `self._is_tp_rank_zero`; both came with a later vLLM's connector. On a release whose connector has
    neither, nothing calls the override, so its reads never run. Only a private name (one leading underscore, no
    dunder) counts: a public method may be called by the client's users, from code the scan never sees."""
    tree = file.tree
    classes = [n for n in tree.body if isinstance(n, ast.ClassDef)]
    candidates = [(cls, fn) for cls in classes for fn in cls.body
                  if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) and fn.body and not fn.decorator_list
                  and fn.name.startswith("_") and not fn.name.startswith("__") and fn.lineno not in done]
    if not candidates:
        return []
    mentions = name_mentions(tree, bare=True)
    out: list[Guard] = []
    for cls, fn in candidates:
        own = (fn.lineno, fn.end_lineno or fn.lineno)
        if any(not own[0] <= line <= own[1] for line in mentions.get(fn.name, ())):
            continue  # named outside its own body (a call, a callback handed out, a string): may run
        label = f"{file.module}.{cls.name}"
        bases = vllm_bases_through(usage, api, [label])
        if not bases or any(mro_defines_any(api, b, (fn.name,)) is not False for b in bases):
            continue  # an override of the target's method, or a base it cannot see all of (nn.Module calls hooks)
        if _vllm_may_call(api, usage, label, fn.name) or _named_elsewhere(source, file, fn.name):
            continue  # (the text of every other client file is read last: the dearest question)
        start, end = body_span(fn.body)
        out.append(Guard(start, end, "dead", frozenset(), fn.lineno, frozenset({fn.name}),
                         where=(f"`{cls.name}.{fn.name}` is a private method that no client code calls and that this "
                                "vLLM neither defines on its base nor calls")))
    return out


def _all_inside(lines: list[int], spans: list[tuple[int, int, Guard]]) -> Guard | None:
    """The unreachable guard over the first of `lines`, when every one of them lies in some unreachable span (and
    there is one at least)."""
    first = None
    for line in lines:
        hit = next((g for start, end, g in spans if start <= line <= end), None)
        if hit is None:
            return None
        first = first or hit
    return first


def _named_elsewhere(source, file, name: str) -> bool:
    """Another client file names it (importing vLLM or not)."""
    if any(f is not file and name in f.text for f in source.files):
        return True
    return next(iter(source.other_files(containing=name)), None) is not None


def _vllm_may_call(api, usage, label: str, name: str) -> bool:
    """Whether vLLM's sources may call `name` on the client class's objects: any mention that is not `self.<name>` in
    a class outside the client class's vLLM bases (with their MROs) counts."""

    bases = {c.qualname for b in vllm_bases_through(usage, api, [label]) for c in api.mro(b)[0]}
    for rel in text_index_for(api).files_mentioning(name):
        tree = api.parse(rel)
        if tree is None:
            return True
        module = module_name_for(rel)
        for cls_name, node in _mentions(tree, name):
            if cls_name is None or f"{module}.{cls_name}" in bases:
                return True
            if not (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self"):
                return True
    return False


def _mentions(tree: ast.Module, name: str):
    """(top-level class around it or None, node) for every attribute, name or string `name` in `tree`."""
    spans = [(n.lineno, n.end_lineno or n.lineno, n.name) for n in tree.body if isinstance(n, ast.ClassDef)]
    for node in nodes_of(tree, ast.Attribute, ast.Name, ast.Constant, ast.FunctionDef, ast.AsyncFunctionDef):
        hit = (isinstance(node, ast.Attribute) and node.attr == name) or (isinstance(node, ast.Name) and node.id == name) \
            or (isinstance(node, ast.Constant) and node.value == name)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue  # vLLM's own definition of a method of that name is no call
        if hit:
            line = node.lineno
            yield next((c for s, e, c in spans if s <= line <= e), None), node
