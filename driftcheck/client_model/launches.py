"""How a client starts vLLM without importing it: `vllm serve` command lines and the JSON configs they pass.

Read from the client's launch files (`ClientSource.launch_files()`): Python argument lists
(`[sys.executable, "-m", "vllm.entrypoints.cli.main", "serve", model, "--speculative-config",
json.dumps(cfg), *extra]`, with later `cmd.append(...)`/`extend`/`+=`), command strings handed to
`subprocess`/`os.system`, shell scripts (backslash continuations, bash arrays), YAML (`command: vllm serve
...`, block scalars, flow lists) and Dockerfiles (`CMD`/`ENTRYPOINT`/`RUN`, exec or shell form). Also the
config dicts a client builds in Python: `speculative_config=`/`kv_transfer_config=` keywords, a dict
assigned to `*speculative_config`, and any dict literal with a `"kv_connector"` key.

A token driftcheck cannot read (a variable, a call, `"$@"`) is kept as computed (`text=None`), so a rule
knows where a command line stops being certain.
"""

from __future__ import annotations

import ast
import bisect
import json
import re
import shlex
from collections import deque
from dataclasses import dataclass, field

from driftcheck.client_model.client import ClientSource, LaunchFile, is_test_path
from driftcheck.client_model.container_launches import (
    ContainerCommand, container_commands, dockerfile_commands, exec_form, image_reference, image_run_at, image_variables,
    column, official_server_image, server_image, variable_image,
)
from driftcheck.client_model.shell_arrays import ShellArray, array_at, computed, expanded_array, read_arrays, word_line
from driftcheck.astnodes import children, dotted_name, first_line, nodes_of, walk

CONFIG_FLAGS = {"--speculative-config": "speculative", "--kv-transfer-config": "kv_transfer"}
CONFIG_KEYWORDS = {"speculative_config": "speculative", "kv_transfer_config": "kv_transfer"}
COMPUTED = object()  # a config value driftcheck cannot read

_SEP = r"""[\s"',]+"""  # between words of a command line, or of a JSON/YAML flow list
SHELL_START = re.compile(rf"\bvllm{_SEP}serve\b|-m{_SEP}vllm\.entrypoints\.(?:openai\.api_server|cli\.main{_SEP}serve)\b|"
                         r"--entrypoint[= ]\S*vllm\b[\s\S]*?\sserve\b|"  # a container whose entrypoint is vllm
                         r"\bvllm-openai\b")  # vLLM's server image, whose entrypoint is `vllm serve` (`docker run IMAGE ARGS`)
STOP_TOKENS = {";", "&", "&&", "|", "||", ")", "(", ">", ">>", "<", "2>&1", "|&", ";;"}


@dataclass
class Arg:
    text: str | None  # None: computed (a variable, a call, "$X")
    line: int
    config: "ConfigUse | None" = None  # a JSON / dict config this token carries
    spread: bool = False  # *args, "$@": any number of unknown tokens


@dataclass
class Launch:
    rel: str
    line: int
    code: str
    entry: str  # "serve" | "api_server"
    kind: str  # python | shell | yaml | dockerfile
    args: list[Arg] = field(default_factory=list)
    command: str = ""  # the executable that starts it when it is run by name (`vllm serve`): "vllm"; "" for `-m`
    unseen: bool = False  # a test's command list that driftcheck never sees run (`only_inspected`)
    image: tuple[str, int] | None = None  # (reference, line) of the container image a manifest runs it in
    restarts: int | None = None  # the line where a container's arguments say `vllm serve` again after the image's own


@dataclass
class ConfigUse:
    rel: str
    line: int
    code: str
    which: str  # "speculative" | "kv_transfer"
    keys: dict[str, tuple[int, object]] = field(default_factory=dict)  # key -> (line, str value | COMPUTED)
    open: bool = False  # `**other` or computed keys: more keys than these
    unseen: bool = False  # a test's dict that driftcheck does not see handed to vLLM (`reaches_vllm`)


@dataclass
class Launches:
    launches: list[Launch] = field(default_factory=list)
    configs: list[ConfigUse] = field(default_factory=list)
    kv_dicts: list = field(default_factory=list)  # (file, dict node, scope): dicts with a "kv_connector" key
    modules: list[tuple[str, str, int, str]] = field(default_factory=list)  # `python -m vllm.x`: (module, file, line, code)
    unseen: set = field(default_factory=set)  # id() of those a test builds and driftcheck does not see reach vLLM

    def kv_configs(self, fields: set[str]) -> list[ConfigUse]:
        """The `"kv_connector"` dicts that are KV transfer configs: most of their keys (two at least) are fields of the
        target's KVTransferConfig (a usage-stats dict that reports `"kv_connector"` among 25 other keys is not one)."""
        out = []
        seen: set[int] = set()
        for f, node, scope in self.kv_dicts:
            keys = [k.value for k in node.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)]
            known = sum(1 for k in keys if k in fields)
            if known >= 2 and known * 2 >= len(keys):
                use = _dict_config(f, node, "kv_transfer", scope, seen)
                if use is not None:
                    use.unseen = id(node) in self.unseen
                    out.append(use)
        return out


def collect(source: ClientSource) -> Launches:
    out = Launches()
    for f in source.launch_files():
        if f.kind == "python" and f.tree is not None:
            _python(f, out)
        elif f.kind in ("shell", "yaml", "dockerfile"):
            _text(f, out)
        if f.kind in ("python", "shell"):  # (a manifest's or Dockerfile's runs in its image, whose vLLM may be another)
            out.modules += _run_modules(f)
    return out


# `python -m vllm.x` in a shell line, `"-m", "vllm.x"` in a Python list
_RUN_MODULE = re.compile(r"""(?<![\w-])-m(?:\s+|["']\s*,\s*["'])(vllm(?:\.\w+)+)\b(?![.\w])""")


_CONTAINER_RUN = re.compile(r"\b(?:docker|podman|nerdctl|kubectl|singularity|apptainer|enroot)\b|--container-image")


def _run_modules(f) -> list[tuple[str, str, int, str]]:
    """The vLLM modules a file runs with `python -m`: not on a comment line, nor after `echo` / `printf` / `print(`
    (a command shown, not run), nor in a command that runs it in a container (whose image has its own vLLM)."""
    out = []
    for m in _RUN_MODULE.finditer(f.text):
        line = f.text.count("\n", 0, m.start()) + 1
        code = f.lines[line - 1] if line <= len(f.lines) else ""
        before = code[:max(0, m.start() - (f.text.rfind("\n", 0, m.start()) + 1))]
        first = line  # the command's first line: a shell command goes on over lines ending in `\`
        while first > 1 and f.lines[first - 2].rstrip().endswith("\\"):
            first -= 1
        command = "\n".join(f.lines[first - 1:line])
        if code.lstrip().startswith("#") or re.search(r"\b(?:echo|printf|print\()", before) or _CONTAINER_RUN.search(command):
            continue
        out.append((m.group(1), f.rel, line, code.strip()))
    return out


# ---------------------------------------------------------------------------------------------- Python
class _Scope:
    """Names bound once in a function (or the module): to a dict literal or a string constant."""

    def __init__(self, nodes: list[ast.AST]):
        """`nodes`: the scope's own (`_walk_scope`)."""
        self.values: dict[str, ast.expr | None] = {}
        for sub in nodes:
            if isinstance(sub, ast.Assign):
                for t in sub.targets:
                    if isinstance(t, ast.Name):
                        self.values[t.id] = sub.value if t.id not in self.values else None
            elif isinstance(sub, ast.AnnAssign) and isinstance(sub.target, ast.Name) and sub.value is not None:
                self.values[sub.target.id] = sub.value if sub.target.id not in self.values else None

    def value(self, expr: ast.expr) -> ast.expr:
        if isinstance(expr, ast.Name) and self.values.get(expr.id) is not None:
            return self.values[expr.id]
        return expr


_NESTED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


def _walk_scope(node: ast.AST) -> list[ast.AST]:
    """The nodes of one scope, not those of nested functions and classes (listed once: a scope's bindings, its
    launches and its appends are all read from the one list)."""
    out: list[ast.AST] = []
    stack = children(node)
    while stack:
        sub = stack.pop()
        out.append(sub)
        if not isinstance(sub, _NESTED):
            stack.extend(children(sub))
    return out


# What a scope must hold to launch vLLM or build a config this module reads: the `serve` of a command line (also in
# `api_server`), a config keyword or name, or the "kv_connector" key. Every value read is bound in the scope that
# uses it (`_Scope`), so a function whose lines hold none of these adds nothing.
_LAUNCH_WORDS = re.compile(r"serve|speculative_config|kv_transfer_config|kv_connector")


def _scopes(f: LaunchFile):
    """The module, then its functions in `ast.walk` order: those whose lines hold one of _LAUNCH_WORDS (a walk that
    enters only the nodes whose lines do), or all of them where the text has line breaks `ast` counts and
    `str.count("\n")` does not."""
    yield f.tree
    if "\r" in f.text or "\f" in f.text or "\v" in f.text:
        for node in walk(f.tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                yield node
        return
    lines: list[int] = []
    line, pos = 1, 0
    for m in _LAUNCH_WORDS.finditer(f.text):
        line += f.text.count("\n", pos, m.start())
        pos = m.start()
        if not lines or lines[-1] != line:
            lines.append(line)
    todo = deque(children(f.tree))
    while todo:
        node = todo.popleft()
        start = getattr(node, "lineno", None)
        if start is not None:
            start = first_line(node) if getattr(node, "decorator_list", None) else start
            i = bisect.bisect_left(lines, start)
            if i == len(lines) or lines[i] > (getattr(node, "end_lineno", None) or start):
                continue  # nothing inside this node's lines: no function in it can hold a word
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node
        todo.extend(children(node))


def _code(f: LaunchFile, line: int) -> str:
    return f.lines[line - 1].strip() if 0 < line <= len(f.lines) else ""


def _python(f: LaunchFile, out: Launches) -> None:
    if not _names_vllm(f):
        return
    seen_dicts: set[int] = set()
    # A test builds config dicts for stand-ins as well as for vLLM (AF: `SimpleNamespace(speculative_config={...})`):
    # there, a dict is certain only where driftcheck sees it handed on to vLLM (`reaches_vllm`); in the package's own
    # code, as before, wherever it is.
    callees = _callee_names(f.tree) if is_test_path(f.rel) else None
    for scope_node in _scopes(f):
        nodes = _walk_scope(scope_node)
        scope = _Scope(nodes)
        module = f.tree if scope_node is f.tree else None
        joined: set | None = None
        for node in nodes:
            if isinstance(node, (ast.List, ast.Tuple)):
                launch = _python_list(f, node, scope, seen_dicts)
                if launch is not None:
                    _python_appends(f, nodes, node, scope, launch, seen_dicts)
                    joined = _space_joined(nodes) if joined is None else joined
                    name = next((n for n, v in scope.values.items() if v is node), None)
                    if id(node) in joined or (name is not None and name in joined):
                        launch.args = _shell_words(f, launch.args)
                    if callees is not None:
                        launch.unseen = only_inspected(node, nodes, scope, callees[0], module)
                    out.launches.append(launch)
            elif isinstance(node, ast.Call):
                for arg in node.args[:1]:
                    text = _command_string(arg)
                    if text is not None:
                        _shell_command(f, text, node.lineno, "python", out, fixed_line=True)
                for k in node.keywords:
                    if k.arg in CONFIG_KEYWORDS:
                        value = scope.value(k.value)
                        if isinstance(value, ast.Dict):
                            use = _python_config(f, value, CONFIG_KEYWORDS[k.arg], scope, out, seen_dicts)
                            if use is not None and callees is not None:
                                use.unseen = not reaches_vllm(value, nodes, scope, callees, module)
            elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Dict):
                names = [t.id if isinstance(t, ast.Name) else t.attr if isinstance(t, ast.Attribute) else
                         t.slice.value if isinstance(t, ast.Subscript) and isinstance(t.slice, ast.Constant) else ""
                         for t in node.targets]
                if any(isinstance(n, str) and n.endswith("speculative_config") for n in names):
                    use = _python_config(f, node.value, "speculative", scope, out, seen_dicts)
                    if use is not None and callees is not None:
                        use.unseen = not reaches_vllm(node.value, nodes, scope, callees, module)
            if isinstance(node, ast.Dict) and any(isinstance(k, ast.Constant) and k.value == "kv_connector" for k in node.keys):
                out.kv_dicts.append((f, node, scope))
                if callees is not None and not reaches_vllm(node, nodes, scope, callees, module):
                    out.unseen.add(id(node))


# The standard library's attribute bags and doubles: a config keyword given to one builds a stand-in, not vLLM's config.
_STAND_IN_MODULES = {"types": {"SimpleNamespace"}, "argparse": {"Namespace"},
                     "unittest.mock": {"Mock", "MagicMock", "NonCallableMock", "AsyncMock"}}


def _callee_names(tree: ast.Module) -> tuple[frozenset[str], frozenset[str]]:
    """(the names a file binds by importing from vLLM, the dotted names it calls the standard library's stand-ins
    by): `from vllm import LLM`, `import vllm`; `SimpleNamespace`, `types.SimpleNamespace`, `mock.MagicMock`; the
    latter with the file's own functions that only build a stand-in (`_stand_in_builders`)."""
    vllm, bags = _imported_callees(tree)
    return vllm, bags | _stand_in_builders(tree, vllm, bags)


def stand_in_callees(tree: ast.Module) -> frozenset[str]:
    """The dotted names a file calls the standard library's stand-ins by, and its own functions that only build one."""
    return _callee_names(tree)[1]


# Builtins a stand-in builder may call on its way to the stand-in: they make or read plain containers.
_CONTAINER_BUILTINS = frozenset({"dict", "list", "tuple", "set", "len", "isinstance", "str", "int", "bool", "sorted"})


def _stand_in_builders(tree: ast.Module, vllm: frozenset[str], bags: frozenset[str]) -> frozenset[str]:
    """The file's module-level functions that only build and return a standard-library stand-in from what they are
    handed (kaito's test helper `def _make_args(**kwargs): defaults = {...}; defaults.update(kwargs); return
    argparse.Namespace(**defaults)`, QD2): a config keyword given to one reaches that stand-in, not vLLM. Every call
    in its body is a stand-in's, a container builtin's or a method of a local it bound to a literal; it names nothing
    imported from vLLM; and every `return` hands back a stand-in call or a local bound to one."""
    out: set[str] = set()
    for fn in tree.body:
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) or fn.decorator_list:
            continue
        literals: set[str] = set()  # locals bound to a dict / list / set literal
        made: set[str] = set()  # locals bound to a stand-in call
        ok, returns = True, 0
        nodes = list(walk(fn))
        for node in nodes:
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                if isinstance(node.value, (ast.Dict, ast.List, ast.Set)):
                    literals.add(node.targets[0].id)
                elif isinstance(node.value, ast.Call) and (dotted_name(node.value.func) or "") in bags:
                    made.add(node.targets[0].id)
        for node in nodes:
            if isinstance(node, ast.Name) and node.id in vllm:
                ok = False
            elif isinstance(node, (ast.Lambda, ast.Yield, ast.YieldFrom, ast.Await)) or \
                    (node is not fn and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))):
                ok = False
            elif isinstance(node, ast.Call):
                name = dotted_name(node.func) or ""
                receiver = node.func.value if isinstance(node.func, ast.Attribute) else None
                if not (name in bags or name in _CONTAINER_BUILTINS
                        or (isinstance(receiver, ast.Name) and receiver.id in literals)):
                    ok = False
            elif isinstance(node, ast.Return):
                value = node.value
                returns += 1
                if not ((isinstance(value, ast.Call) and (dotted_name(value.func) or "") in bags)
                        or (isinstance(value, ast.Name) and value.id in made)):
                    ok = False
            if not ok:
                break
        if ok and returns:
            out.add(fn.name)
    return frozenset(out)


def _imported_callees(tree: ast.Module) -> tuple[frozenset[str], frozenset[str]]:
    """(the names a file binds by importing from vLLM, the dotted names it calls the standard library's stand-ins by)."""
    vllm: set[str] = set()
    bags: set[str] = set()
    for node in walk(tree):
        if isinstance(node, ast.ImportFrom) and not node.level and (node.module or "").split(".")[0] == "vllm":
            vllm |= {a.asname or a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module in _STAND_IN_MODULES:
            bags |= {a.asname or a.name for a in node.names if a.name in _STAND_IN_MODULES[node.module]}
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module == "unittest":
            bags |= {f"{a.asname or a.name}.{c}" for a in node.names if a.name == "mock" for c in _STAND_IN_MODULES["unittest.mock"]}
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] == "vllm":
                    vllm.add(a.asname or "vllm")
                elif a.name in _STAND_IN_MODULES:
                    bags |= {f"{a.asname or a.name}.{c}" for c in _STAND_IN_MODULES[a.name]}
    return frozenset(vllm), frozenset(bags)


def _vllm_callee(call: ast.Call, vllm_names: frozenset[str]) -> bool:
    """Whether a call's callee is reached from a name bound by an import from vLLM (`LLM(...)`, `vllm.LLM(...)`,
    `EngineArgs.from_cli_args(...)`)."""
    func = call.func
    while isinstance(func, (ast.Attribute, ast.Call, ast.Subscript)):
        func = func.value if not isinstance(func, ast.Call) else func.func
    return isinstance(func, ast.Name) and func.id in vllm_names


def reaches_vllm(node: ast.expr, nodes: list[ast.AST], scope: "_Scope", names: tuple[frozenset[str], frozenset[str]],
                 tree: ast.Module | None = None) -> bool:
    """Whether a dict literal of a test, or a name of the scope bound to it, is handed on where vLLM gets it: as any
    argument of a call of vLLM's (`KVTransferConfig(**cfg)`), or as the `speculative_config=` / `kv_transfer_config=`
    of any call but a standard-library stand-in's (`VllmRunner(model, speculative_config=cfg)`, a test helper that
    forwards it to `LLM`; not `SimpleNamespace(speculative_config=cfg)`), directly or inside another literal there.
    `tree`: the file, when the scope is its top level: a module constant's name may be handed on in any function."""
    vllm_names, bags = names
    bound = {name for name, value in scope.values.items() if value is node}

    def holds(arg: ast.expr) -> bool:
        return any(sub is node or (isinstance(sub, ast.Name) and sub.id in bound) for sub in walk(arg))

    for call in nodes_of(tree, ast.Call) if tree is not None and bound else nodes:
        if not isinstance(call, ast.Call):
            continue
        if _vllm_callee(call, vllm_names):
            if any(holds(arg) for arg in [*call.args, *(k.value for k in call.keywords)]):
                return True
        elif (dotted_name(call.func) or "") not in bags and \
                any(k.arg in CONFIG_KEYWORDS and holds(k.value) for k in call.keywords):
            return True
    return False


# Calls that read a list without running it
_INSPECTING_BUILTINS = frozenset({"print", "len", "repr", "str", "sorted", "list", "tuple", "set", "isinstance", "any",
                                  "all", "enumerate", "zip"})


def only_inspected(node: ast.expr, nodes: list[ast.AST], scope: "_Scope", vllm_names: frozenset[str],
                   tree: ast.Module | None = None) -> bool:
    """Whether a test's `["vllm", "serve", ...]` list is only looked at, never run: every use of it (the literal, or a
    name of the scope bound to it) is an argument of a vLLM call (vLLM's sweep tests hand one to
    `ParameterSweepItem.apply_to_cmd`, which edits the list), an operand of a comparison or an `assert`, a builtin
    that reads it (`len`, `print`), or a method or index on the list itself (`cmd.index(...)`, `cmd[1]`). Any other use
    (a subprocess call, a client helper, `sys.argv = ...`, `return cmd`, `cmd + extra`) may run it. `tree`: the file,
    when the scope is its top level: a module constant's name may be used in any function."""
    bound = {name for name, value in scope.values.items() if value is node}
    walked = list(walk(tree)) if tree is not None and bound else nodes
    holders = [node] + [sub for sub in walked if isinstance(sub, ast.Name) and sub.id in bound and isinstance(sub.ctx, ast.Load)]
    parents: dict[int, ast.AST] = {}
    for sub in walked:
        for child in ast.iter_child_nodes(sub):
            parents[id(child)] = sub
    for holder in holders:
        parent = parents.get(id(holder))
        if isinstance(parent, ast.keyword):
            parent = parents.get(id(parent))
        if holder is node and isinstance(parent, (ast.Assign, ast.AnnAssign)):
            targets = parent.targets if isinstance(parent, ast.Assign) else [parent.target]
            if all(isinstance(t, ast.Name) and t.id in bound for t in targets):
                continue  # `cmd = [...]`: its uses are the name's
            return False  # `sys.argv = [...]`, or a name bound twice whose uses are not followed
        if isinstance(parent, ast.Call) and parent.func is not holder:
            if _vllm_callee(parent, vllm_names) or _vllm_receiver(parent, scope, vllm_names) or \
                    dotted_name(parent.func) in _INSPECTING_BUILTINS:
                continue
            return False
        if isinstance(parent, (ast.Compare, ast.Assert)):
            continue
        if isinstance(parent, (ast.Attribute, ast.Subscript)) and parent.value is holder:
            continue
        return False
    return True


def _vllm_receiver(call: ast.Call, scope: "_Scope", vllm_names: frozenset[str]) -> bool:
    """`item.apply_to_cmd(...)` where the scope binds `item` once to what a vLLM call returns
    (`item = ParameterSweepItem.from_record(...)`)."""
    func = call.func
    while isinstance(func, (ast.Attribute, ast.Subscript)):
        func = func.value
    value = scope.values.get(func.id) if isinstance(func, ast.Name) else None
    return isinstance(value, ast.Call) and _vllm_callee(value, vllm_names)


def _names_vllm(f: LaunchFile) -> bool:
    """Whether a Python file names vLLM at all (an import, a `vllm serve` line, a comment, its path). One that does not
    builds its `speculative_config` / `"kv_connector"` dicts for something else: xinference 4.1.0's TensorRT-LLM
    backend (`model/llm/trt_llm/core.py`) sets `config["speculative_config"] = {"decoding_type": ..., "max_draft_len":
    ...}`, TensorRT-LLM's keys, and never names vLLM. Every command line this module reads names it."""
    return "vllm" in f.text.lower() or "vllm" in f.rel.lower()


def _const(expr: ast.expr) -> str | None:
    return expr.value if isinstance(expr, ast.Constant) and isinstance(expr.value, str) else None


def _entry_at(texts: list[str | None], images: dict[str, str] | None = None) -> tuple[str, int, str] | None:
    """(entry, index of the first argument, the command run by name or "") when these tokens start vLLM's server."""
    for i, t in enumerate(texts):
        if t in ("serve", "vllm.entrypoints.openai.api_server") and _printed(texts, i):
            continue  # `echo vllm serve m --flag`: a command printed, not run
        if t == "serve" and i >= 1 and texts[i - 1] is not None and (
                texts[i - 1] == "vllm" or texts[i - 1].endswith("/vllm") or
                (texts[i - 1] == "vllm.entrypoints.cli.main" and i >= 2 and texts[i - 2] == "-m")):
            return "serve", i + 1, "" if texts[i - 1] == "vllm.entrypoints.cli.main" else "vllm"
        if t == "serve" and i >= 3 and (texts[i - 1] is None or computed(texts[i - 1]) or ":" in texts[i - 1]
                                         or "/" in texts[i - 1]) \
                and _vllm_entrypoint(texts[:i - 1]):
            # `docker run ... --entrypoint vllm IMAGE serve ...` (16a): the word before `serve` is the image, a
            # variable or a reference with a tag or a registry path (not `vllm bench serve`'s `bench`)
            return "serve", i + 1, "vllm"
        if t == "vllm.entrypoints.openai.api_server" and i >= 1 and texts[i - 1] == "-m":
            return "api_server", i + 1, ""
    at = image_run_at(texts, images) if images or any(server_image(t) for t in texts) else None
    if at is not None:  # `docker run ... vllm/vllm-openai:TAG --model M ...`: the image's entrypoint is `vllm serve`
        return "serve", at + 1, "vllm"
    return None


def _printed(texts: list[str | None], i: int) -> bool:
    """Whether the command whose entry word is `i` (`serve` after `vllm`, or a module after `python -m`) is printed:
    `echo` / `printf` right before it (a YAML block read as one line may hold an `echo` of its own before it)."""
    k = i - 1 if texts[i] == "serve" else i - 2  # `vllm` of `vllm serve`, `python` of `python -m ...`
    return k >= 1 and texts[k - 1] in ("echo", "printf")


def _vllm_entrypoint(texts: list[str | None]) -> bool:
    """Whether a container run's words before its image set the image's entrypoint to `vllm`."""
    for k, t in enumerate(texts):
        value = texts[k + 1] if t == "--entrypoint" and k + 1 < len(texts) else \
            t.partition("=")[2] if t is not None and t.startswith("--entrypoint=") else None
        if value is not None and (value == "vllm" or value.endswith("/vllm")):
            return True
    return False


def _python_list(f: LaunchFile, node, scope: _Scope, seen: set[int]) -> Launch | None:
    texts = [_const(scope.value(e)) if not isinstance(e, ast.Starred) else None for e in node.elts]
    if "serve" not in texts and "vllm.entrypoints.openai.api_server" not in texts and not any(map(server_image, texts)):
        return None
    found = _entry_at(texts)
    if found is None:
        return None
    entry, start, command = found
    launch = Launch(f.rel, node.lineno, _code(f, node.lineno), entry, "python", command=command,
                    image=(texts[start - 1], node.lineno) if server_image(texts[start - 1]) else None)
    for e in node.elts[start:]:
        launch.args.append(_python_arg(f, e, scope, seen))
    return launch


def _python_arg(f: LaunchFile, e: ast.expr, scope: _Scope, seen: set[int]) -> Arg:
    if isinstance(e, ast.Starred):
        return Arg(None, e.lineno, spread=True)
    value = scope.value(e)
    text = _const(value)
    if text is not None:
        return Arg(text, e.lineno)
    # json.dumps(cfg): the dict it serialises
    if isinstance(value, ast.Call) and ast.unparse(value.func).endswith("dumps") and value.args:
        target = scope.value(value.args[0])
        if isinstance(target, ast.Dict):
            return Arg(None, e.lineno, config=_dict_config(f, target, "", scope, seen))
    return Arg(None, e.lineno)


def _space_joined(nodes: list[ast.AST]) -> set:
    """What the scope joins with spaces into one shell command line (`" ".join(parts)`, also inside an f-string): the
    names of those lists and the ids of list literals joined in place."""
    out: set = set()
    for sub in nodes:
        if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) and sub.func.attr == "join" and \
                len(sub.args) == 1 and not sub.keywords and isinstance(sub.func.value, ast.Constant) and \
                isinstance(sub.func.value.value, str) and sub.func.value.value.isspace():
            arg = sub.args[0]
            out.add(arg.id if isinstance(arg, ast.Name) else id(arg))
    return out


def _shell_words(f: LaunchFile, args: list[Arg]) -> list[Arg]:
    """The items of a list joined with spaces into a shell command are shell text, not argv entries: `"--host 0.0.0.0"`
    is two words. A constant item is split as the shell splits it; a computed one stays one computed token. The
    command ends at a shell operator (`>`, `&`, `;`, ...), as in `_shell_command`."""
    out: list[Arg] = []
    for arg in args:
        if arg.text is None or not any(c.isspace() or c in "'\"\\" for c in arg.text):
            if arg.text in STOP_TOKENS:
                break
            out.append(arg)
            continue
        try:
            words = shlex.split(arg.text)
        except ValueError:  # unbalanced quotes: completed by a neighbouring item, so not readable here
            out.append(Arg(None, arg.line))
            continue
        for w in words:
            if w in STOP_TOKENS:
                return out
            out.append(Arg(w, arg.line, config=_json_config(f, w, arg.line)))
    return out


def _python_appends(f: LaunchFile, nodes: list[ast.AST], node, scope: _Scope, launch: Launch, seen: set[int]) -> None:
    """`cmd.append(x)`, `cmd.extend([...])`, `cmd += [...]` on the name the list was bound to (`nodes`: the scope's)."""
    name = next((n for n, v in scope.values.items() if v is node), None)
    if name is None:
        return
    for sub in nodes:
        items: list[ast.expr] = []
        if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) and isinstance(sub.func.value, ast.Name) and \
                sub.func.value.id == name and sub.args:
            if sub.func.attr == "append":
                items = [sub.args[0]]
            elif sub.func.attr == "extend":
                seq = scope.value(sub.args[0])
                items = list(seq.elts) if isinstance(seq, (ast.List, ast.Tuple)) else [ast.Starred(sub.args[0], lineno=sub.lineno)]
        elif isinstance(sub, ast.AugAssign) and isinstance(sub.target, ast.Name) and sub.target.id == name:
            seq = scope.value(sub.value)
            items = list(seq.elts) if isinstance(seq, (ast.List, ast.Tuple)) else [ast.Starred(sub.value, lineno=sub.lineno)]
        for item in items:
            if not hasattr(item, "lineno"):
                item.lineno = sub.lineno  # type: ignore[attr-defined]
            launch.args.append(_python_arg(f, item, scope, seen))


def _command_string(arg: ast.expr) -> str | None:
    """A whole command handed to subprocess/os.system as one string (f-string holes become `$_`)."""
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        text = arg.value
    elif isinstance(arg, ast.JoinedStr):
        text = "".join(v.value if isinstance(v, ast.Constant) else "$_" for v in arg.values)
    else:
        return None
    return text if SHELL_START.search(text) else None


def _python_config(f: LaunchFile, node: ast.Dict, which: str, scope: _Scope, out: Launches, seen: set[int]) -> ConfigUse | None:
    use = _dict_config(f, node, which, scope, seen)
    if use is not None:
        out.configs.append(use)
    return use


def _dict_config(f: LaunchFile, node: ast.Dict, which: str, scope: _Scope, seen: set[int]) -> ConfigUse | None:
    """A dict literal as a config (once per dict: a dict both named and serialised is one config)."""
    if id(node) in seen:
        return None
    seen.add(id(node))
    use = ConfigUse(f.rel, node.lineno, _code(f, node.lineno), which)
    for k, v in zip(node.keys, node.values):
        if k is None:
            use.open = True
            continue
        key = _const(k)
        if key is None:
            use.open = True
            continue
        value = _const(scope.value(v))
        use.keys[key] = (k.lineno, value if value is not None else COMPUTED)
    return use


# ----------------------------------------------------------------------------------- shell, YAML, Docker
def _logical_lines(f: LaunchFile):
    """(first line number, text) with backslash continuations joined and YAML block scalars folded."""
    lines = f.lines
    i = 0
    while i < len(lines):
        start = i
        parts = [lines[i]]
        while parts[-1].rstrip().endswith("\\") and i + 1 < len(lines):
            parts[-1] = parts[-1].rstrip()[:-1]
            i += 1
            parts.append(lines[i])
        if f.kind == "yaml" and re.search(r"(:|^\s*-)\s*[>|][-+]?\d?\s*$", lines[start]):
            # a block scalar: the lines indented deeper than its key, folded into one command
            j = i + 1
            while j < len(lines) and (not lines[j].strip() or column(lines[j]) > column(lines[start])):
                j += 1
            # a `#` line of the block is a comment of the script it holds: joined into one line, it would comment out
            # every command after it (gpu-recipes' Helm templates, R1)
            block = [b.strip().removesuffix("\\") for b in lines[i + 1:j] if b.strip() and not b.strip().startswith("#")]
            if block:
                yield start + 2, " ".join(block)
                i = j
                continue
        yield start + 1, "\n".join(parts)
        i += 1


def _text(f: LaunchFile, out: Launches) -> None:
    arrays = read_arrays(f.lines) if f.kind == "shell" else {}
    images = image_variables(f.lines) if f.kind == "shell" and "vllm-openai" in f.text else {}
    containers = container_commands(f.lines) if f.kind == "yaml" else \
        dockerfile_commands(f.lines) if f.kind == "dockerfile" else []
    read = {row for c in containers if _container_launch(f, c, out) for row in c.rows}
    for line, text in _logical_lines(f):
        stripped = text.lstrip()
        if stripped.startswith("#") or line in read or not (SHELL_START.search(text) or images and any(
                f"${name}" in text or f"${{{name}}}" in text for name in images)):  # `docker run "$IMAGE" ...`
            continue
        body = stripped
        if f.kind == "dockerfile":
            body = re.sub(r"^(RUN|CMD|ENTRYPOINT)\s+", "", body, flags=re.I)
        elif f.kind == "yaml":
            body = re.sub(r"^(-\s+)?([\w.-]+\s*:\s*)?", "", body)
        _shell_command(f, body, line, f.kind, out, arrays=arrays, images=images)


def _container_launch(f: LaunchFile, c: ContainerCommand, out: Launches) -> bool:
    """A container's command, when it starts vLLM's server: its entrypoint's words and its arguments' (R5 / R6), or
    the script a shell it runs takes (`command: ["/bin/bash", "-lc", "--"]`, `args: ["ray start ...; vllm serve ..."]`)."""
    texts = [word for word, _ in c.words]
    found = _entry_at(texts)
    if found is None:
        at = _script_word(texts)
        if at is None or not SHELL_START.search(texts[at]):
            return False
        before = len(out.launches)
        # `bash -c SCRIPT -- --model m ...`: the word after the script is its `$0`, the rest its `"$@"`
        _shell_command(f, texts[at], c.words[at][1], f.kind, out, positional=c.words[at + 2:])
        for launch in out.launches[before:]:
            launch.image = launch.image or c.image  # (the script runs in the container's image)
        return len(out.launches) > before
    entry, start, command = found
    launch = Launch(f.rel, c.line, _code(f, c.line), entry, f.kind, command=command, image=c.image)
    if c.from_image and official_server_image(c.image[0]) and texts[2:4] == ["vllm", "serve"]:
        launch.restarts = c.words[2][1]  # `command: ["vllm", "serve", ...]` on the image that already runs it
    # (a word with spaces is one argument, never a flag)
    launch.args += [Arg(word, at, config=_json_config(f, word, at)) if word is not None and not re.search(r"\s", word)
                    else Arg(None, at) for word, at in c.words[start:]]
    out.launches.append(launch)
    return True


_SHELL = re.compile(r"(?:\S*/)?(?:ba|da|z|k)?sh")


def _script_word(texts: list[str | None]) -> int | None:
    """The index of the script in `sh -c SCRIPT` (`bash -lc -- SCRIPT`, `/bin/sh -ec SCRIPT`): the shell runs it."""
    for i, t in enumerate(texts):
        if t is None or not _SHELL.fullmatch(t):
            continue
        j, takes_script = i + 1, False
        while j < len(texts) and texts[j] is not None and texts[j].startswith("-"):
            if texts[j] == "--":
                j += 1
                break
            takes_script = takes_script or (not texts[j].startswith("--") and "c" in texts[j][1:])
            j += 1
        return j if takes_script and j < len(texts) and texts[j] is not None else None
    return None


def _shell_command(f: LaunchFile, text: str, line: int, kind: str, out: Launches, fixed_line: bool = False,
                   arrays: dict[str, ShellArray] | None = None, images: dict[str, str] | None = None,
                   positional: list[tuple[str | None, int]] | None = None) -> None:
    """`positional`: the words a `sh -c SCRIPT $0 ...` hands the script, which its `"$@"` expands to."""
    value = exec_form(text)  # `["vllm", "serve", ...]`: a Dockerfile's exec form, a YAML flow list
    tokens = [v for v in value if isinstance(v, str)] if value is not None else None
    if tokens is None:
        try:
            lexer = shlex.shlex(text, posix=True, punctuation_chars=";&|()<>")
            lexer.whitespace_split = True
            lexer.commenters = "#"
            tokens = list(lexer)
        except ValueError:  # unbalanced quotes: not a command we can read
            return
    held = array_at(arrays, line) if arrays else None
    if held is not None:  # `cmd=( vllm serve "$m" ... )`, `cmd+=( ... )`, then `"${cmd[@]}"`: the array is the command
        _held_command(f, held, kind, out)
        return
    texts: list[str | None] = [None if t in STOP_TOKENS else t for t in tokens]
    found = _entry_at(texts, images)
    if found is None:
        at = _script_word(texts)  # `bash -c "vllm serve m --flag"`: the script's own words (batch 18a's M3)
        if at is not None and len(tokens[at]) < len(text) and SHELL_START.search(tokens[at]):
            _shell_command(f, tokens[at], line, kind, out, fixed_line, arrays, images)
        return
    entry, start, command = found
    image = texts[start - 1] if server_image(texts[start - 1]) else variable_image(texts[start - 1], images)
    launch = Launch(f.rel, line, _code(f, line), entry, kind, command=command,
                    image=(image_reference(image), line) if image else None)
    where = line
    for tok in tokens[start:]:
        if tok in STOP_TOKENS:
            break
        if not fixed_line:
            where = word_line(f.lines, tok, where, reach=200)
        array = expanded_array(tok, arrays, line) if arrays else None
        if array is not None:  # `"${ARGS[@]}"` of an array the script fills with words it spells
            launch.args += _array_args(f, array.words)
            continue
        if positional is not None and tok in ("$@", "${@}"):  # odh's `exec vllm serve "$@"`, the flags in `args:`
            launch.args += [Arg(word, at) if word is not None and not re.search(r"\s", word) else Arg(None, at)
                            for word, at in positional]
        elif tok in ('"$@"', "$@", "$*") or re.fullmatch(r"\$\{?\w+\[[@*]\]\}?", tok):
            launch.args.append(Arg(None, where, spread=True))
        elif computed(tok):
            launch.args.append(Arg(None, where, spread=tok.startswith("$") and not tok.startswith("--")))
        else:
            launch.args.append(Arg(tok, where, config=_json_config(f, tok, where)))
    out.launches.append(launch)


def _held_command(f: LaunchFile, array: ShellArray, kind: str, out: Launches) -> None:
    """A command a bash array holds whole, its appends included (batch 15b's R4), read once per array."""
    if any(launch.rel == f.rel and launch.line == array.first_line for launch in out.launches):
        return
    found = _entry_at([None if computed(word) else word for word, _ in array.words])
    if found is None:
        return
    entry, start, command = found
    launch = Launch(f.rel, array.first_line, _code(f, array.first_line), entry, kind, command=command)
    launch.args += _array_args(f, array.words[start:])
    out.launches.append(launch)


def _array_args(f: LaunchFile, words: list[tuple[str, int]]) -> list[Arg]:
    return [Arg(None, at, spread=word.startswith("$")) if computed(word) else Arg(word, at, config=_json_config(f, word, at))
            for word, at in words]


def _json_config(f: LaunchFile, token: str, line: int) -> ConfigUse | None:
    """A JSON object token (the value of --speculative-config / --kv-transfer-config)."""
    body = token.split("=", 1)[1] if token.startswith("--") and "=" in token else token
    if not body.startswith("{"):
        return None
    try:
        value = json.loads(body)
    except ValueError:
        return None
    if not isinstance(value, dict):
        return None
    use = ConfigUse(f.rel, line, _code(f, line), "")
    for key, v in value.items():
        use.keys[key] = (line, v if isinstance(v, str) else COMPUTED)
    return use
