"""DC102 prefix-caching-hidden-states: captured prefill hidden states are silently truncated.

With prefix caching on, a prompt whose blocks are already cached is not prefilled again, so a
hidden-state capture gets fewer rows than the prompt has tokens, or none, and no error. Seen with
speculators 0.3.0 (+ the seed's block_hasher patch) on vLLM 0.16 (CPU): (4, 256) instead of
(35, 256) for a repeated prompt; and with vLLM's own `extract_hidden_states` path on vLLM 0.22.0
(CUDA) under its default config: truncated, misaligned rows for repeated prompts. With
`enable_prefix_caching=False` every row matched a transformers reference.

The probe flags clients that capture prefill hidden states (in process, through a patched
`forward` or a worker extension that stores a hidden-states value in a container, an attribute or an
item; a place named for hidden states that gets only constants, `self.aux_hidden_state_layers = tuple(range(n))`,
holds settings, not rows, or by configuring `extract_hidden_states` / a hidden-states KV connector in Python or in
scripts) while prefix caching is left on, unless the target turns it off
itself for that path (it reads the target's config code for such a switch). In a script, a comment line names the path
but configures nothing; a shell command runs on over backslash continuations and quotes left open (a JSON config over
several lines), and a variable assigned the config counts as off where every command that expands it turns caching off
(NB3); an array `ARGS=( ... )` over several lines is one command, and caching counts as off where the array the command
fills (with its appends) or one it expands whole holds `--no-enable-prefix-caching` (shell_arrays.py). In Python, the statement that holds the path's name turns caching off, or, where that statement binds a dict to
a name, a later statement of the same block stores False into it (`kwargs["enable_prefix_caching"] = False`,
`kwargs.update(enable_prefix_caching=False)`; the last such store decides, one under an `if` does not count; SB1). Fix:
`disable-prefix-caching` (or `--no-enable-prefix-caching` on the command line).
"""

from __future__ import annotations

import ast
import re

from driftcheck.vllm_model import bodies
from driftcheck.rules.context import ScanContext
from driftcheck.vllm_model.facts import prefix_caching_default, prefix_caching_state
from driftcheck.rules.findings import Rule
from driftcheck.client_model.uses import Loc, loc_of
from driftcheck.astnodes import dotted_name, nodes_of, own_scope, walk
from driftcheck.client_model.client import SCRIPT_SUFFIXES, SHELL_SUFFIXES, is_test_path
from driftcheck.client_model.launches import stand_in_callees
from driftcheck.client_model.shell_arrays import EXPANSION, ShellArray, read_arrays, shell_parens

RULE = Rule("DC102", "prefix-caching-hidden-states", "Hidden-state capture with prefix caching on", "warning",
            fix="disable-prefix-caching", kind="behaviour")

HS_MARKERS = ("extract_hidden_states", "HiddenStatesConnector", "hidden_states_connector")
CLI_OFF = re.compile(r"--no-enable-prefix-caching|--enable-prefix-caching[= ](?:False|false|0)")


def target_disables_for_extraction(api) -> tuple[str, int] | None:
    """Where the target itself turns prefix caching off for extract_hidden_states, if it does."""
    index = bodies.text_index_for(api)
    for rel in index.files_mentioning("extract_hidden_states"):
        if b"enable_prefix_caching" not in index.blob(rel):
            continue
        tree = api.parse(rel)
        if tree is None:
            continue
        for node in walk(tree):
            if isinstance(node, ast.If) and "extract_hidden_states" in ast.unparse(node.test):
                for sub in walk(ast.Module(body=node.body, type_ignores=[])):
                    if isinstance(sub, (ast.Assign, ast.AnnAssign)) and "enable_prefix_caching" in ast.unparse(sub) \
                            and bodies.literal(sub.value) is False:
                        return rel, sub.lineno
    return None


def _configuring_strings(tree: ast.AST):
    """String constants used as configuration values (dict values, keyword values, list items, assignments),
    not docstrings, messages or comparisons (`method != "extract_hidden_states"` checks, it does not configure; nor
    does a tuple it is tested against, `method not in ("eagle3", "extract_hidden_states")`: batch 20g's HS1)."""
    compared = {id(n) for c in nodes_of(tree, ast.Compare) for n in [c.left, *c.comparators]}
    typed = {id(n.slice) for n in nodes_of(tree, ast.Subscript)}  # `Literal["eagle3", "extract_hidden_states"]`
    # a plain class's own attributes declare what the class is (vLLM 0.34.0's `ExtractHiddenStatesSpeculatorConfig.
    # base_method = "extract_hidden_states"`, the registry's entry for the path): no engine is configured by them (29d
    # R3); a decorated one's (`@dataclass`) are the defaults of a configuration
    declared = {id(s) for c in nodes_of(tree, ast.ClassDef) if not c.decorator_list
                for s in c.body if isinstance(s, (ast.Assign, ast.AnnAssign))}
    given: dict[int, str | None] = {}  # a list or tuple given for a name: its items are (`METHODS = ("eagle3", ...)`)
    for node in walk(tree):
        pairs: list[tuple[str | None, ast.expr]] = []  # (the key, keyword, name or flag it is given for, the value)
        if id(node) in compared or id(node) in typed or id(node) in declared:
            continue
        if isinstance(node, ast.Dict):
            pairs = [(k.value if isinstance(k, ast.Constant) and isinstance(k.value, str) else None, v)
                     for k, v in zip(node.keys, node.values)]
        elif isinstance(node, ast.keyword):
            pairs = [(node.arg, node.value)]
        elif isinstance(node, (ast.List, ast.Tuple)):
            flags = [e.value if isinstance(e, ast.Constant) and isinstance(e.value, str) and e.value.startswith("-")
                     else None for e in node.elts]
            pairs = [(flags[i - 1] if i and flags[i - 1] else given.get(id(node)), e) for i, e in enumerate(node.elts)]
        elif isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            pairs = [(_target_name(targets[0]) if len(targets) == 1 else None, node.value)]
        for name, value in pairs:
            if isinstance(value, (ast.List, ast.Tuple)):
                given[id(value)] = name
            if isinstance(value, ast.Constant) and isinstance(value.value, str) and _configures(name, value.value) \
                    and not _DOTTED_MARKER.search(value.value):
                yield value


# what a value that configures the hidden-states path is given for: `method=`, `"kv_connector": ...`,
# `spec_method = ...`, `--speculative-config.method`; a bare name elsewhere (a config class's `model_type`, a registry
# entry `("extract_hidden_states", "Model")`) only names it (26m N5)
_CONFIG_KEY = re.compile(r"method|connector|config|spec|kv|transfer", re.I)


# the path's name as a part of a dotted module path (`"my_plugin.extract_hidden_states.MySpeculator"`, a speculator
# class's path): it names code, not the method a config selects (29d R3)
_DOTTED_MARKER = re.compile(r"^[\w.]*(?:\.extract_hidden_states\b|\bextract_hidden_states\.)[\w.]*$")


def _configures(name: str | None, value: str) -> bool:
    """A string that sets the path: given for a configuration key, or a JSON or command-line text of its own."""
    return bool(name and _CONFIG_KEY.search(name)) or any(c in value for c in "{ =") or value.startswith("-")


def _target_name(target: ast.expr) -> str | None:
    if isinstance(target, ast.Name):
        return target.id
    if isinstance(target, ast.Attribute):
        return target.attr
    if isinstance(target, ast.Subscript) and isinstance(target.slice, ast.Constant):
        return str(target.slice.value)
    return None


def _python_configs(ctx: ScanContext):
    """(loc, node, prefix caching off?) for each place the client configures a hidden-states path."""
    for file in ctx.usage.files:
        if not any(m in file.text for m in HS_MARKERS):
            continue  # no marker in the file's text: no string constant can hold one
        bags = None  # a test file's stand-in callees, read once per file when a config string asks
        for node in _configuring_strings(file.tree):
            if any(m in node.value for m in HS_MARKERS):
                # The whole statement: `LLM(kv_transfer_config=KVTransferConfig(...), enable_prefix_caching=False)`
                # and `cmd = ["vllm", "serve", ..., "--no-enable-prefix-caching"]` both turn it off.
                scope = _enclosing_statement(file.tree, node) or _enclosing_call(file.tree, node) or node
                if bags is None:
                    bags = stand_in_callees(file.tree) if is_test_path(file.rel) else frozenset()
                if bags and _for_a_stand_in(bags, scope, node):
                    continue
                text = ast.unparse(scope)
                off = bool(re.search(r"enable_prefix_caching['\"]?\s*[:=]\s*False", text)) or bool(CLI_OFF.search(text))
                if not off and isinstance(scope, (ast.Assign, ast.AnnAssign)):
                    off = _turned_off_after(file.tree, scope)
                yield loc_of(file, node), off, text


def _for_a_stand_in(bags: frozenset[str], scope: ast.AST, node: ast.AST) -> bool:
    """A test's config built inside a standard-library stand-in, `bags` the test file's names for them (vLLM 0.34.0's
    `SimpleNamespace(speculative_config=fake_speculative_config(method="extract_hidden_states"))`, a unit test's fake
    `VllmConfig`): no engine reads it, so no hidden state is captured through it (a stand-in built elsewhere and
    handed on is not followed)."""
    return any(isinstance(c, ast.Call) and (dotted_name(c.func) or "") in bags and
                              any(n is node for n in walk(c)) for c in walk(scope))


def _turned_off_after(tree: ast.AST, assign: ast.Assign | ast.AnnAssign) -> bool:
    """Whether the dict a config statement binds to a name (`kwargs = {"speculative_config": {...}, ...}`) has prefix
    caching turned off by a later statement of the same block, run whenever the assignment is: `kwargs[
    "enable_prefix_caching"] = False` or `kwargs.update(enable_prefix_caching=False)` (TorchSpec's engine builds its
    `LLM(**engine_kwargs)` so; SB1). The last such store decides; one under an `if`, a loop or a `try` does not count."""
    targets = assign.targets if isinstance(assign, ast.Assign) else [assign.target]
    if len(targets) != 1 or not isinstance(targets[0], ast.Name):
        return False
    name, state = targets[0].id, None
    for stmt in _later_in_block(tree, assign):
        if any(isinstance(t, ast.Name) and t.id == name for t in _bound_names(stmt)):
            break  # the name is bound anew: later stores go to another object
        setting = _prefix_caching_store(stmt, name)
        if setting is not None:
            state = setting
    return state is False


def _later_in_block(tree: ast.AST, stmt: ast.stmt) -> list[ast.stmt]:
    for node in walk(tree):
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if isinstance(block, list) and any(s is stmt for s in block):
                return block[next(i for i, s in enumerate(block) if s is stmt) + 1:]
    return []


def _bound_names(stmt: ast.stmt) -> list[ast.expr]:
    if isinstance(stmt, ast.Assign):
        return list(stmt.targets)
    if isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
        return [stmt.target]
    return []


def _prefix_caching_store(stmt: ast.stmt, name: str) -> bool | None:
    """The literal a top-level statement stores as `name`'s enable_prefix_caching, or None when it stores none."""
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
        target = stmt.targets[0]
        if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name) and target.value.id == name \
                and bodies.literal(target.slice) == "enable_prefix_caching":
            value = bodies.literal(stmt.value)
            return value if isinstance(value, bool) else True  # a value not known: maybe on
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        call = stmt.value
        if isinstance(call.func, ast.Attribute) and call.func.attr == "update" \
                and isinstance(call.func.value, ast.Name) and call.func.value.id == name:
            found = None
            for arg in call.args:  # `kwargs.update({"enable_prefix_caching": False})`
                if isinstance(arg, ast.Dict):
                    for key, value in zip(arg.keys, arg.values):
                        if key is not None and bodies.literal(key) == "enable_prefix_caching":
                            found = bodies.literal(value)
            for kw in call.keywords:
                if kw.arg == "enable_prefix_caching":
                    found = bodies.literal(kw.value)
            if found is not None:
                return found if isinstance(found, bool) else True
    return None


def _enclosing_statement(tree: ast.AST, target: ast.AST) -> ast.stmt | None:
    """The innermost simple statement holding `target` (not the function or class around it)."""
    best = None
    for node in walk(tree):
        if isinstance(node, ast.stmt) and not hasattr(node, "body") and any(n is target for n in walk(node)):
            best = node
    return best


def _enclosing_call(tree: ast.AST, target: ast.AST) -> ast.Call | None:
    best = None
    for node in walk(tree):
        if isinstance(node, ast.Call) and any(n is target for n in walk(node)):
            if best is None or node.lineno >= best.lineno:
                best = node
    return best


_STORES = ("append", "extend", "insert", "add", "put", "put_nowait", "copy_", "update", "setdefault")
# `hidden_states`, `aux_hidden_states`, `_captured_states`: not `hidden_size`, which a layer's constructor keeps, nor
# `cudagraph_capture_sizes` (a CUDA graph's capture)
_HIDDEN_STATES = ("hidden_state",)
_CAPTURE_WORDS = ("hidden_state", "captured")


def _stores_hidden_states(fn: ast.AST) -> bool:
    """Whether `fn` keeps hidden states where they outlive the call: a call that adds to a container, or a store into
    an attribute or an item, whose value names hidden states (`aux_hidden_states.append(h.clone())`, `buf[i] =
    hidden_states`) or whose destination is named for them or for what was captured (`self._captured_states = {}`,
    `layer_states[i].append(activation)` into `extension._captured_states`). Binding a local name keeps nothing, nor
    does adding to a local list the call only returns (`local_buffers`)."""
    buffers = local_buffers(fn)
    for node in walk(fn):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _STORES:
            if isinstance(node.func.value, ast.Name) and node.func.value.id in buffers:
                continue
            values, places = [*node.args, *(k.value for k in node.keywords)], [node.func.value]
        elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            places = [t for t in targets if isinstance(t, (ast.Attribute, ast.Subscript))]
            values = [node.value] if places else []
        else:
            continue
        if any(_names_capture(v, _HIDDEN_STATES) for v in values):
            return True
        # a place named for hidden states that gets only constants holds settings, not captured rows: a patched
        # model `__init__` doing `self.aux_hidden_state_layers = tuple(range(n))` (tpu-spec-decode, 12e) picks the
        # layers vLLM's own drafter reads; an empty container (`self._captured_states = {}`) is a buffer to fill
        if any(_names_capture(p, _CAPTURE_WORDS) for p in places) and not all(_only_constants(v) for v in values):
            return True
    return False


_CONTAINERS = ("tuple", "list", "sorted", "frozenset", "set")
_FRESH = ("list", "dict", "set", "deque", "collections.deque", "defaultdict", "collections.defaultdict")


def local_buffers(fn: ast.AST) -> set[str]:
    """Names `fn` binds to a new container (`aux_hidden_states = []`) that never leave the call but through its
    `return`: every other read adds to it, measures it (`len`) or tests it. A replaced model `forward` that collects
    the layers' outputs in one and returns them to vLLM's own EAGLE-3 drafter keeps nothing past the call (vllm-gaudi,
    vllm-ascend: 27e X2); one stored, handed to a call or yielded does leave it."""
    scope = own_scope(fn)
    bound: dict[str, int] = {}
    fresh: set[str] = set()
    for node in scope:
        if isinstance(node, (ast.Global, ast.Nonlocal)):
            bound.update({name: 2 for name in node.names})  # the module's or a closure's: not the call's own
        elif isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            bound[node.id] = bound.get(node.id, 0) + 1
    for node in scope:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) and \
                (isinstance(node.value, (ast.List, ast.Dict, ast.Set)) or isinstance(node.value, ast.Call)
                 and dotted_name(node.value.func) in _FRESH):
            fresh.add(node.targets[0].id)
    fresh = {name for name in fresh if bound.get(name) == 1}
    if not fresh:
        return set()
    allowed: set[int] = set()  # ids of the reads that keep the container inside the call
    for node in scope:
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _STORES:
            allowed.add(id(node.func.value))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "len":
            allowed.update(id(a) for a in node.args)
        elif isinstance(node, ast.Return) and node.value is not None:
            allowed.update(id(e) for e in (node.value.elts if isinstance(node.value, ast.Tuple) else [node.value]))
        elif isinstance(node, (ast.If, ast.While, ast.IfExp)):
            allowed.add(id(node.test))
    for node in scope:
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in fresh and id(node) not in allowed:
            fresh.discard(node.id)
    return fresh


def _only_constants(value: ast.expr) -> bool:
    """Whether `value` is made of constants only, through tuples, lists, sets, arithmetic and `range(...)`, whose items
    are ints whatever its arguments (`tuple(range(n))`, `(2, 5, 8)`, `None`): no tensor can be in it. An empty
    container is not: it is there to be filled."""
    if isinstance(value, ast.Constant):
        return True
    if isinstance(value, (ast.Tuple, ast.List, ast.Set)):
        return bool(value.elts) and all(_only_constants(e) for e in value.elts)
    if isinstance(value, ast.BinOp):
        return _only_constants(value.left) and _only_constants(value.right)
    if isinstance(value, ast.UnaryOp):
        return _only_constants(value.operand)
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and not value.keywords:
        if value.func.id == "range":
            return True
        return value.func.id in _CONTAINERS and len(value.args) == 1 and _only_constants(value.args[0])
    return False


def _names_capture(expr: ast.AST, words: tuple[str, ...]) -> bool:
    """Whether a name or attribute in `expr` holds one of `words` (`aux_hidden_states`, `self._captured_states[i]`)."""
    for node in walk(expr):
        name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""
        if any(w in name.lower() for w in words):
            return True
    return False


def _scripts(ctx: ScanContext):
    tree = ctx.client.tree
    for rel in tree.iter_files("", suffix=""):
        if not rel.endswith(SCRIPT_SUFFIXES) or "/." in f"/{rel}":
            continue
        try:
            text = tree.read_text(rel)
        except Exception:
            continue
        if not any(m in text for m in HS_MARKERS):
            continue
        lines = text.splitlines()
        shell = rel.endswith(SHELL_SUFFIXES)
        spans = _shell_commands(lines) if shell else None
        arrays = read_arrays(lines) if shell else {}
        for i, line in enumerate(lines, 1):
            if not any(m in line for m in HS_MARKERS):
                continue
            start, end = _span_of(spans, lines, i - 1)
            if start == i - 1 and line.lstrip().startswith("#"):
                continue  # a comment names the path; it configures nothing
            command = "\n".join(lines[start:end + 1])
            off = _turns_off(command) or _array_turns_off(command, arrays)
            users = _commands_using(command, spans, lines) if spans is not None and not off else []
            yield Loc(rel, i, 1, line.strip()), off or bool(users) and all(_turns_off(u) for u in users)


def _turns_off(command: str) -> bool:
    return bool(CLI_OFF.search(command) or "enable_prefix_caching: false" in command.lower())


def _array_turns_off(command: str, arrays: dict[str, ShellArray]) -> bool:
    """Whether an array this command fills, with its appends (`ARGS=( --speculative-config ... )`, then `ARGS+=(
    --no-enable-prefix-caching )`), or an array it expands whole (`vllm serve ... "${EXTRA[@]}"`) turns caching off."""
    assigned = re.match(r"\s*(?:(?:local|declare|typeset|readonly|export)(?:\s+-\w+)*\s+)?([A-Za-z_]\w*)=\(", command)
    names = {assigned.group(1)} if assigned else set()
    names |= {m.group(1) for m in EXPANSION.finditer(command)}
    return any(name in arrays and _turns_off(arrays[name].text) for name in names)


def _span_of(spans: list[tuple[int, int]] | None, lines: list[str], index: int) -> tuple[int, int]:
    """The first and last line of the command holding line `index`: from the script's commands where they were read,
    else by backslash continuations alone."""
    for start, end in spans or ():
        if start <= index <= end:
            return start, end
    start = index
    while start > 0 and lines[start - 1].rstrip().endswith("\\"):
        start -= 1
    end = index
    while end < len(lines) - 1 and lines[end].rstrip().endswith("\\"):
        end += 1
    return start, end


def _shell_commands(lines: list[str]) -> list[tuple[int, int]] | None:
    """(first, last) line of each command of a shell script: a newline ends one unless a backslash continues it, a
    quote opened in it is still open (a JSON `--speculative-config "{...}"` over several lines) or an array it assigns
    is (`ARGS=(` ... `)`, one flag a line); a `#` starting a word outside quotes comments out the rest of its line. None
    when a quote never closes (not read that way, then)."""
    spans: list[tuple[int, int]] = []
    start, quote, depth = 0, None, 0
    for i, line in enumerate(lines):
        marks, quote, continued = shell_parens(line, 0, quote)
        for j in marks:
            if line[j] == "(" and (depth or (j and line[j - 1] == "=")):
                depth += 1  # an array `ARGS=( ... )` over several lines is one command
            elif line[j] == ")" and depth:
                depth -= 1
        if quote is None and not continued and not depth:
            spans.append((start, i))
            start = i + 1
    return spans if quote is None else None


def _commands_using(command: str, spans: list[tuple[int, int]], lines: list[str]) -> list[str]:
    """The other commands of the script that expand the variable `command` assigns (`KVCFG="{...connector...}"`, then
    `vllm serve ... --kv-transfer-config "$KVCFG"`); none when it assigns none."""
    assigned = re.match(r"\s*(?:export\s+|local\s+|readonly\s+)?([A-Za-z_]\w*)=", command)
    if assigned is None:
        return []
    use = re.compile(r"\$\{?" + assigned.group(1) + r"\b")
    commands = ("\n".join(lines[start:end + 1]) for start, end in spans)
    return [c for c in commands if c != command and use.search(c)]


def check(ctx: ScanContext):
    disabled_by_target = None
    configured = list(_python_configs(ctx)) + [(loc, off, "") for loc, off in _scripts(ctx)]
    if configured:
        disabled_by_target = target_disables_for_extraction(ctx.api)
    for loc, off, _text in configured:
        if off or disabled_by_target:
            continue
        yield ctx.finding(
            RULE,
            f"this configures vLLM's extract_hidden_states / a hidden-states connector without turning prefix caching off; "
            f"{ctx.version_label()} does not turn it off for that path, so a prompt that repeats (or shares cached blocks) "
            "is not prefilled again and its captured hidden states come back short or empty, with no error. Pass "
            "enable_prefix_caching=False (--no-enable-prefix-caching).",
            loc, None, "extract_hidden_states", when="silent",
        )
    # In-process capture: a patched forward / worker extension that stores hidden states, plus a hand-built engine
    # config. Not every function the client binds onto vLLM captures (a patched `create_engine_config`, a weight
    # filter, a model builder): it must keep a hidden-states value somewhere that outlives the call.
    capture = [b for b in ctx.usage.bound if _stores_hidden_states(b.node)]
    if not capture:
        return
    state, cache_call, why = prefix_caching_state(ctx, any_call=True)
    if state == "off":
        return
    first = capture[0]
    loc = cache_call.loc if cache_call is not None else first.loc
    default = prefix_caching_default(ctx.api)
    yield ctx.finding(
        RULE,
        f"`{first.name}` captures hidden states in process ({first.how.replace('-', ' ')}) and {why}: in "
        f"{ctx.version_label()} cached prompt blocks are not prefilled again, so repeated prompts return fewer rows than "
        "tokens (or none), silently. Pass enable_prefix_caching=False to CacheConfig.",
        loc, ctx.vllm_location(default.path, default.line) if default else None, "vllm.config.CacheConfig.enable_prefix_caching",
        when="silent", severity="warning", capture=first.name, prefix_caching=state,
    )
