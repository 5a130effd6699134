"""The anchors a client's patch script looks for in a vLLM file, and where it raises when one is not there.

DS4_SM120_Flash_VLLM_Experiment's `docker/patch_vllm_deepseekv4.py` (run by its Dockerfile) patches vLLM's files one
function each:

    def patch_cuda_platform_deep_gemm_sm120() -> None:
        path = Path("/usr/local/lib/python3.12/dist-packages/vllm/platforms/cuda.py")
        source = path.read_text()
        old = '        return cls.is_device_capability(90) or cls.is_device_capability_family(100)\\n'
        ...
        if old not in source:
            if "cls.is_device_capability(120)" in source:
                return
            raise RuntimeError(f"Could not patch DeepGEMM SM120 support in {path}")
        path.write_text(source.replace(old, new, 1))

0.20.0's `cuda.py` has the anchor; 0.33.0's has neither it nor the patched line, so the script raises and the image
build stops (batch 19a's recall note). Read here, per function the script calls at its top level (directly, or from a
function it calls there): a name bound once to a path spelling a release file (`text_patchers.release_paths`), a name
bound to its `read_text()`, and the `if` statements at the function's top level whose tests are only `LIT in SRC` /
`LIT not in SRC` (a literal or a name bound once to one), `and`, `or`, `not`: each is decided on the target's text,
its branch followed, and a `raise` reached with nothing undecided before it is the finding. Anything else on the way
(a loop, a call that is not a print or a log, another test) stops the reading of that function: no finding; so does
a new binding of the source name (a later test may look for text an earlier replace put there). An anchor the client
itself may have put into the file is no evidence either: one that is part of a string of another of its patch
functions or scripts, or of a line a diff it ships adds (stella's `hotpatch_*.py` look for the controller call their
`patch_scheduler.py` inserts, "run AFTER patch_scheduler.py"), leaves the function unread.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from driftcheck.client_model.client import in_skipped_folder, texts_mentioning
from driftcheck.client_model.text_patchers import release_paths


@dataclass
class AnchorRaise:
    rel: str  # the script
    line: int  # the `raise`
    code: str
    test_line: int  # the `if` whose branch reaches it
    vllm_path: str  # the release file the script reads
    anchors: list[str]  # the literals the test looks for


def anchor_raises(client, package: str, read_release) -> list[AnchorRaise]:
    """The raises a client's patch scripts reach on the target's files (`read_release(path)`: the file's text, None
    when the release lacks it)."""
    out: list[AnchorRaise] = []
    parsed = client.package_scripts(package)  # every client file that spells a path into the package and reads or writes
    scripts = [(rel, text, tree) for rel, text, tree in parsed if ".read_text(" in text and " not in " in text]
    if not scripts:
        return out
    strings = [(node, rel) for rel, _text, tree in parsed for node in ast.walk(tree)
               if isinstance(node, ast.Constant) and isinstance(node.value, str)]
    added = _diff_additions(client)
    for rel, text, tree in scripts:
        functions = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
        lines = text.splitlines()
        for function in _called_at_top(tree, functions):
            found = _reached_raise(function, package, read_release)
            if found is None:
                continue
            raise_node, test_line, path, anchors = found
            own = {id(n) for n in ast.walk(function)}
            if any(a.strip() and (any(a.strip() in n.value for n, _r in strings if id(n) not in own) or a.strip() in added)
                   for a in anchors):
                continue  # text the client's other patches may have put there
            code = lines[raise_node.lineno - 1].strip() if raise_node.lineno <= len(lines) else ""
            out.append(AnchorRaise(rel, raise_node.lineno, code, test_line, path, anchors))
    return out


def _diff_additions(client) -> str:
    """The lines the client's `.patch` / `.diff` files add, joined."""
    rels = [rel for rel in client.tree.iter_files("", "") if rel.endswith((".patch", ".diff")) and not in_skipped_folder(rel)]
    return "\n".join(line[1:] for _rel, text in texts_mentioning(client, rels, "+") for line in text.splitlines()
                     if line.startswith("+") and not line.startswith("+++"))


def _called_at_top(tree: ast.Module, functions: dict) -> list[ast.FunctionDef]:
    """The module's functions a bare call at its top level (or under `if __name__ == "__main__":`) runs, and those such
    a function calls the same way at its own top level: one level down, enough for a `main()` that lists the patches."""
    def bare_calls(body) -> list[str]:
        names = []
        for stmt in body:
            if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and isinstance(stmt.value.func, ast.Name):
                names.append(stmt.value.func.id)
            elif isinstance(stmt, ast.If) and _is_main_test(stmt.test):
                names += bare_calls(stmt.body)
        return names

    out: dict[str, ast.FunctionDef] = {}
    for name in bare_calls(tree.body):
        if name in functions:
            out.setdefault(name, functions[name])
            for inner in bare_calls(functions[name].body):
                if inner in functions:
                    out.setdefault(inner, functions[inner])
    return list(out.values())


def _is_main_test(test: ast.expr) -> bool:
    return isinstance(test, ast.Compare) and isinstance(test.left, ast.Name) and test.left.id == "__name__" \
        and len(test.comparators) == 1 and isinstance(test.comparators[0], ast.Constant) \
        and test.comparators[0].value == "__main__"


def _reached_raise(function: ast.FunctionDef, package: str, read_release):
    """(raise node, the deciding `if` line, the release file, the anchors tested) where the function certainly raises on
    the target's text, else None."""
    literals: dict[str, str] = {}
    paths: dict[str, str] = {}
    source: str | None = None  # the name bound to the file's text
    text: str | None = None
    path: str | None = None
    for stmt in function.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            name, value = stmt.targets[0].id, stmt.value
            if name == source:
                return None  # the text changes: later tests may look for what the script put there
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                literals[name] = value.value if name not in literals else None
                continue
            spelled = {p for n in ast.walk(value) if isinstance(n, ast.Constant) and isinstance(n.value, str)
                       for p in release_paths(n.value, package)}
            if len(spelled) == 1:
                paths[name] = spelled.pop()
                continue
            read = _read_of(value)
            if read in paths and source is None:
                source, path = name, paths[read]
                text = read_release(path)
                if text is None:
                    return None  # the release lacks the file: another question than an anchor's
            continue
        if isinstance(stmt, ast.If) and source is not None:
            taken = _decide(stmt.test, source, text, literals)
            if taken is None:
                return None
            branch = stmt.body if taken else stmt.orelse
            found = _branch_raises(branch, source, text, literals)
            if found is None:
                return None  # a branch that exits, or that driftcheck does not follow
            if found is not False:
                anchors = [lit for lit in _tested_literals(stmt.test, literals)]
                return found, stmt.lineno, path, anchors
            continue
        if _harmless(stmt):
            continue
        return None
    return None


def _branch_raises(body, source: str, text: str, literals: dict):
    """The raise the branch reaches; False when it runs through without raising or leaving; None when it leaves or
    does something driftcheck does not follow."""
    for stmt in body:
        if isinstance(stmt, ast.Raise):
            return stmt
        if isinstance(stmt, ast.If):
            taken = _decide(stmt.test, source, text, literals)
            if taken is None:
                return None
            found = _branch_raises(stmt.body if taken else stmt.orelse, source, text, literals)
            if found is not False:
                return found
            continue
        if _harmless(stmt):
            continue
        return None  # a return, a write, a loop: not followed
    return False


def _harmless(stmt: ast.stmt) -> bool:
    """A statement that neither leaves the function nor changes what is tested: a print or a log call, `pass`."""
    if isinstance(stmt, ast.Pass):
        return True
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        func = stmt.value.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
        return name in ("print", "debug", "info", "warning", "warn")
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)  # a docstring


def _read_of(value: ast.expr) -> str | None:
    """`NAME.read_text(...)`: NAME."""
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "read_text" \
            and isinstance(value.func.value, ast.Name):
        return value.func.value.id
    return None


def _literal(node: ast.expr, literals: dict) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Name):
        return literals.get(node.id)
    return None


def _decide(test: ast.expr, source: str, text: str, literals: dict) -> bool | None:
    """The test's value on the target's text: only `LIT in SRC`, `LIT not in SRC`, `and`, `or`, `not`."""
    if isinstance(test, ast.BoolOp):
        values = [_decide(v, source, text, literals) for v in test.values]
        if any(v is None for v in values):
            return None
        return all(values) if isinstance(test.op, ast.And) else any(values)
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = _decide(test.operand, source, text, literals)
        return None if inner is None else not inner
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.In, ast.NotIn)) \
            and isinstance(test.comparators[0], ast.Name) and test.comparators[0].id == source:
        lit = _literal(test.left, literals)
        if lit is None:
            return None
        return (lit in text) == isinstance(test.ops[0], ast.In)
    return None


def _tested_literals(test: ast.expr, literals: dict) -> list[str]:
    return [lit for n in ast.walk(test) if isinstance(n, ast.Compare)
            for lit in [_literal(n.left, literals)] if lit is not None]
