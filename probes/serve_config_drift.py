"""DC111 serve-config-drift: a `vllm serve` command line or config the target vLLM does not accept.

Clients that never import vLLM still depend on it: speculators' `scripts/launch_vllm.py` starts
`python -m vllm.entrypoints.cli.main serve MODEL --speculative_config '{"method":
"extract_hidden_states", ...}' --kv_transfer_config '{"kv_connector": "ExampleHiddenStatesConnector",
...}'`, hs-connectors builds those `kv_transfer_config` dicts, and shell scripts, YAML and Dockerfiles
run `vllm serve --flag ...`. On a vLLM whose parser lacks a flag, the server exits at once
(`unrecognized arguments`); a config key the config class forbids is a ValidationError, a speculative
`method` outside the release's `Literal` a ValidationError, a connector name the KV connector factory does
not register `ValueError: Unsupported connector type` while the engine starts.

What is checked, all read from the target's sources (`driftcheck/vllm_model/serve_model.py`), never from a list:
- **flags** of `vllm serve` / `-m vllm.entrypoints.cli.main serve` / `-m vllm.entrypoints.openai.api_server`,
  against the parser followed from the serve subcommand (or the api_server's `__main__`): literal
  `add_argument` flags, the dataclass fields `get_kwargs(cls)` loops turn into flags, `--no-x` for bool
  fields where the release uses `BooleanOptionalAction`; `--a_b` is read as `--a-b` when the release's
  `FlexibleArgumentParser` does so; `--speculative-config.method` is the flag `--speculative-config`;
  a unique prefix is accepted (argparse abbreviations); also the arguments a container hands vLLM's server image
  (`vllm/vllm-openai`, entrypoint `vllm serve`: `docker run IMAGE ARGS`, compose `command:`, Kubernetes `args:`,
  a Dockerfile `CMD`; `client_model/container_launches.py`), and on the official image, arguments that start with
  `vllm serve` again (one positional too many);
- **keys** of `--speculative-config` / `--kv-transfer-config` JSON, of `speculative_config=` /
  `kv_transfer_config=` dicts, of dicts assigned to `*speculative_config` and of any dict with a
  `"kv_connector"` key, against the fields of `SpeculativeConfig` / `KVTransferConfig`: an error where the
  class forbids extra fields (pydantic `extra="forbid"`) or is a plain dataclass, a warning (`when:
  silent`) where pydantic drops them;
- **values that dispatch**: the speculative `method` (the `Literal` of the release's SpeculativeConfig,
  through its aliases) and `kv_connector` (the names `register_connector("Name", ...)` puts in the
  factory whose lookup takes the KV transfer config); a connector given with `kv_connector_module_path`
  is the client's own class and is not checked;
- `LLM(...)` keywords that are neither `LLM.__init__` parameters nor `EngineArgs` fields, where
  `LLM.__init__` hands its `**kwargs` to `EngineArgs(...)` (a TypeError).

A client that registers a vLLM plugin (an entry point in a `vllm.*` group: vLLM's `load_general_plugins()` runs it
while the serve parser is built and when EngineArgs is set up) and whose code replaces what builds the parser (a
method followed to add flags, `EngineArgs.add_cli_args`), the config class's `__new__` / `__init__` or EngineArgs's,
can add flags, keys, methods or keywords of its own (ArcticInference's `ArcticPatch[EngineArgs]`): those are `unknown`,
naming the replacement. A replacement of a parser builder whose flags are all read (literal `add_argument`s, the parser
handed only to argument groups and to the original it saved) adds only those: any other unknown flag stays an error.
For `LLM(...)` keywords the plugin must also be loaded before the call: EngineArgs loads
plugins only once it is built, so the file has to call `load_general_plugins()` first (LC1).

A dict in test code (`is_test_path`) is certain only where driftcheck sees it handed on to vLLM in its scope (a
module constant: in any function of the file): as an argument of a vLLM call (`KVTransferConfig(**cfg)`), or as the
`speculative_config=` / `kv_transfer_config=` of any call but a standard-library stand-in's (`VllmRunner(model,
speculative_config=cfg)`, the test helper that forwards it to `LLM`). Tests also build such dicts for stand-ins
(ai-dynamo's `SimpleNamespace(speculative_config={...})` and a `"kv_connector"` dict handed to its own helper that
wraps it in one): there a key or connector the release lacks is a warning that says so. The package's own dicts stay
certain wherever they go. Likewise a test's `["vllm", "serve", ...]` list that is only inspected, never run (compared
in an `assert`, or handed to vLLM, as vLLM's own sweep tests hand one to `ParameterSweepItem.apply_to_cmd`, which edits
it; `launches.only_inspected`): an unknown flag there is a warning.

Certainty: an unknown flag is an error only when the parser's flag set was derived completely (every
`add_argument` reached had a flag driftcheck could read); otherwise it is `unknown` with the reason. A
token the client computes (a variable, `*extra_args`, `"$@"`) is never judged; flags around it are. The words of a bash
array the script fills and expands whole (`ARGS=( --flag v ... )`, then `vllm serve "${ARGS[@]}"`) are the command's,
each at its own line, where every write of the array is seen (client_model/shell_arrays.py).
Each finding names the client file and line (Python, shell, YAML or Dockerfile) and the vLLM line that
defines the parser, the config class or the registry.
"""

from __future__ import annotations

import ast
import difflib
import re

from driftcheck.astnodes import dotted_name, nodes_of
from driftcheck.rules.context import ScanContext
from driftcheck.rules.findings import Finding, Rule
from driftcheck.client_model.child_exit import child_launch
from driftcheck.client_model.console_scripts import installed_commands, plugin_groups
from driftcheck.client_model.plugin_replacements import plugin_replaces
from driftcheck.client_model.launches import COMPUTED, CONFIG_FLAGS, ConfigUse, Launch, collect
from driftcheck.vllm_model.serve_model import ServeModel, serve_model
from driftcheck.vllm_model.serve_parser import Parser
from driftcheck.vllm_model.resolved import Resolved
from driftcheck.client_model.usage import client_provides
from driftcheck.client_model.uses import Loc
from driftcheck.client_model.client import is_test_path
from driftcheck.vllm_model.other_builds import built_elsewhere
from driftcheck.sources.sources import module_name_for

RULE = Rule("DC111", "serve-config-drift", "vllm serve flag, config key, speculative method or KV connector the target lacks",
            "error", kind="behaviour", raises=("SystemExit", "ValueError", "ValidationError", "TypeError"))

ENTRY_WORDS = {"serve": "vllm serve", "api_server": "python -m vllm.entrypoints.openai.api_server"}


def check(ctx: ScanContext):
    found = collect(ctx.client)
    for module, rel, line, code in found.modules:
        yield from map(lambda item: _in_child(ctx, item), _run_module(ctx, module, rel, line, code))
    llm_calls = [c for c in ctx.usage.calls if c.kind == "construct" and c.target.qualname.startswith("vllm.")
                 and c.target.qualname.rsplit(".", 1)[-1] == "LLM"]
    if not found.launches and not found.configs and not found.kv_dicts and not llm_calls:
        return
    model = serve_model(ctx.api)
    told: set[str] = set()
    configs: list[ConfigUse] = list(found.configs)
    kv = model.configs.get("kv_transfer")
    if kv is not None:
        taken = {(c.rel, c.line) for c in configs}
        configs += [c for c in found.kv_configs(set(kv.fields)) if (c.rel, c.line) not in taken]
    for launch in found.launches:
        for item in map(lambda item: _in_child(ctx, item) if launch.kind == "python" else item,
                        _check_launch(ctx, model, launch, configs, told)):
            if launch.unseen and isinstance(item, Finding) and item.severity == "error":
                item.severity = "warning"  # a test's command list that is only inspected (compared, handed to vLLM)
                item.message += (" The command is in test code, and driftcheck does not see it run there (the test "
                                 "compares it or hands it to vLLM, which may only read it).")
            yield item
    for use in configs:
        for item in _check_config(ctx, model, use, told):
            if use.unseen and isinstance(item, Finding) and item.severity == "error":
                item.severity = "warning"  # AF, QD2: a test's dict may be a stand-in's
                item.message += (" The dict is in test code, and driftcheck does not see it handed to vLLM there (a "
                                 "test may build it for a stand-in).")
            yield item
    for call in llm_calls:
        yield from _check_llm(ctx, model, call)


def _in_child(ctx: ScanContext, item):
    """A launch a Python file starts with `subprocess` fails in the child: a `try` around the call handles that only
    where the call raises on the exit status, and a client that tests the status carries on (child_exit.py)."""
    if not isinstance(item, Finding) or item.client is None:
        return item
    tree = next((f.tree for f in ctx.client.launch_files() if f.rel == item.client.path and f.tree is not None), None)
    launch = child_launch(tree, item.client.line) if tree is not None else None
    if launch is None:
        return item
    item.details["child_process"] = True  # the pipeline's try guards do not hold: the parent's line raises nothing
    if launch.handled and item.severity == "error":
        item.severity = "warning"
        item.message += f" The command runs in a child process (line {launch.line}): {launch.handled}."
    return item


def _run_module(ctx: ScanContext, module: str, rel: str, line: int, code: str):
    """`python -m vllm.x` where the target has no module `vllm.x` (vllm-experiment's `-m vllm.entrypoints.api_server`,
    gone from 0.25.1 on; batch 19b): Python exits at once. Not where the client itself provides the module."""
    if ctx.api.module_path(module) is not None or client_provides(ctx.usage, ctx.client.tree, ctx.api.tree, module):
        return
    parent = module.rsplit(".", 1)[0]
    while parent and ctx.api.module_path(parent) is None:
        parent = parent.rpartition(".")[0]
    where = ctx.vllm_location(ctx.api.module_path(parent)[0], 1) if parent else None
    built = built_elsewhere(ctx.api, module)
    if built is not None:  # `-m vllm.vllm_flash_attn...`: a CUDA build's, which the sources read here lack
        yield ctx.finding(
            RULE, f"`python -m {module}`: {ctx.api.build or 'the build read here'} has no module `{module}`, but vLLM's "
                  f"own code imports `{built[2]}` ({built[0]}:{built[1]}): other builds provide it. It fails here only if "
                  "this build is the one that runs.", _loc(rel, line, code), ctx.vllm_location(built[0], built[1]),
            f"python -m {module}", when="call", fix=False, severity="warning")
        return
    test = is_test_path(rel)
    yield ctx.finding(
        RULE, f"`python -m {module}` runs a module {ctx.version_label()} does not have: Python exits at once with "
              f"`No module named {module}`" + (" (the command is in test code, which may only inspect it)" if test else "") + ".",
        _loc(rel, line, code), where, f"python -m {module}", when="call", fix=False, severity="warning" if test else None)


def _loc(rel: str, line: int, code: str) -> Loc:
    return Loc(rel, line, 1, code)


def _line_code(ctx: ScanContext, launch: Launch, line: int) -> str:
    for f in ctx.client.launch_files():
        if f.rel == launch.rel:
            return f.lines[line - 1].strip() if 0 < line <= len(f.lines) else launch.code
    return launch.code


def _known(parser: Parser, flag: str) -> bool:
    if flag in parser.flags:
        return True
    if flag.startswith("--no-") and ("--" + flag[5:]) in parser.negatable:
        return True
    # argparse accepts a unique prefix of a long option (allow_abbrev)
    return any(f.startswith(flag) for f in parser.flags if f.startswith("--"))


def _check_launch(ctx: ScanContext, model: ServeModel, launch: Launch, configs: list, told: set):
    parser = model.parsers.get(launch.entry)
    if parser is None:
        if launch.entry not in told:
            told.add(launch.entry)
            yield ctx.unknown(RULE, f"cannot find how {ctx.version_label()} builds the `{ENTRY_WORDS[launch.entry]}` argument "
                                    "parser, so its flags are not checked", _loc(launch.rel, launch.line, launch.code))
        return
    if launch.restarts is not None:
        yield _restarted(ctx, parser, launch)
    args = launch.args
    for i, arg in enumerate(args):
        if arg.text is None or not arg.text.startswith("--") or arg.text == "--":
            continue
        raw, _eq, inline = arg.text.partition("=")
        name, dot, subkey = raw.partition(".")
        flag = name.replace("_", "-") if parser.underscores else name
        code = _line_code(ctx, launch, arg.line)
        if not _known(parser, flag):
            yield _unknown_flag(ctx, parser, launch, arg.line, code, raw, flag)
            continue
        which = CONFIG_FLAGS.get(flag)
        if which is None:
            continue
        if dot:  # --speculative-config.method eagle3
            value = inline if _eq else (args[i + 1].text if i + 1 < len(args) else None)
            use = ConfigUse(launch.rel, arg.line, code, which, {subkey.split(".")[0]: (arg.line, value if value is not None else COMPUTED)})
            use.open = True
            configs.append(use)
            continue
        carrier = arg if _eq else (args[i + 1] if i + 1 < len(args) else None)
        if carrier is not None and carrier.config is not None:
            carrier.config.which = which
            if carrier.config not in configs:
                configs.append(carrier.config)


def _restarted(ctx: ScanContext, parser: Parser, launch: Launch):
    """A container of vLLM's image whose arguments start with `vllm serve`: the image's entrypoint already runs it, so
    the server gets `vllm serve vllm serve ...` (the first images' `python3 -m vllm.entrypoints.openai.api_server` got
    `vllm serve ...` as arguments): `vllm` is taken for the model (or `--model`'s value is moved there) and `serve` is
    one positional too many for `parse_args`."""
    code = _line_code(ctx, launch, launch.restarts)
    image = launch.image[0] if launch.image else "vllm/vllm-openai"
    return ctx.finding(
        RULE,
        f"the image `{image}` already runs `vllm serve` (its entrypoint) and appends the container's arguments, which "
        "start with `vllm serve` again: the server's parser takes one positional, the model, and exits at once with "
        "`unrecognized arguments: serve ...` (drop `vllm serve` from the arguments, or set the entrypoint)",
        _loc(launch.rel, launch.restarts, code), ctx.vllm_location(parser.path, parser.line), "vllm serve serve",
        when="call", fix=False, flag="serve", parser=f"{parser.path}:{parser.line}", launch_kind=launch.kind)


def _unknown_flag(ctx: ScanContext, parser: Parser, launch: Launch, line: int, code: str, raw: str, flag: str):
    where = ctx.vllm_location(parser.path, parser.line)
    near = difflib.get_close_matches(flag, [f for f in parser.flags if f.startswith("--")], n=3, cutoff=0.75)
    hint = f" (did you mean {', '.join(near)}?)" if near else ""
    command = ENTRY_WORDS[launch.entry]
    own = installed_commands(ctx.client).get(launch.command) if launch.command else None
    image = _pinned_image(ctx, launch)
    if image is not None:  # aibrix_kvcache's tests/pd_reuse/*.yaml: `image: .../vllm-openai:v0.10.2-aibrix-...`
        return ctx.unknown(RULE, f"`{raw}` is not a flag of {ctx.version_label()}'s `{command}` parser{hint}, but this "
                                 f"launch runs in the container image `{image[0]}` (line {image[1]}), whose tag names "
                                 f"vLLM {image[2]}, not the target", _loc(launch.rel, line, code), symbol=f"{command} {flag}")
    if own is not None:  # vllm-omni: `vllm = "vllm_omni.entrypoints.cli.main:main"`, whose parser adds `--omni`
        return ctx.unknown(RULE, f"`{raw}` is not a flag of {ctx.version_label()}'s `{command}` parser{hint}, but the client "
                                 f"installs its own `{launch.command}` command ({own}), whose parser may take it before "
                                 "vLLM's sees the rest", _loc(launch.rel, line, code), symbol=f"{command} {flag}")
    replaced = plugin_replaces(ctx.client, ctx.usage, parser.builders, flag)
    if replaced:
        return ctx.unknown(RULE, f"`{raw}` is not a flag of {ctx.version_label()}'s `{command}` parser{hint}, but {replaced}, "
                                 "which builds that parser: the flag may be the plugin's", _loc(launch.rel, line, code),
                           symbol=f"{command} {flag}")
    if not parser.complete:
        return ctx.unknown(RULE, f"`{raw}` is not among the flags driftcheck read from {ctx.version_label()}'s `{command}` parser{hint}, "
                                 f"but that parser is built partly from computed flags ({parser.incomplete[0]}), so it may exist",
                           _loc(launch.rel, line, code), symbol=f"{command} {flag}")
    return ctx.finding(
        RULE,
        f"`{command}` in {ctx.version_label()} has no flag `{flag}`{hint}: its parser exits at once with "
        f"`unrecognized arguments: {raw}`.",
        _loc(launch.rel, line, code), where, f"{command} {flag}", when="call", fix=False,
        flag=flag, parser=f"{parser.path}:{parser.line}", launch_kind=launch.kind)


def _check_config(ctx: ScanContext, model: ServeModel, use: ConfigUse, told: set):
    if not use.which:
        return
    cls = model.configs.get(use.which)
    flag = "--" + use.which.replace("_", "-") + "-config"
    if cls is None:
        if use.which not in told:
            told.add(use.which)
            yield ctx.unknown(RULE, f"cannot find the {use.which} config class of {ctx.version_label()}, so `{flag}` keys are not checked",
                              _loc(use.rel, use.line, use.code))
        return
    short = cls.qualname.rsplit(".", 1)[-1]
    replaced = plugin_replaces(ctx.client, ctx.usage, [(cls.qualname, m) for m in _BUILDS])
    for key, (line, value) in use.keys.items():
        code = use.code if line == use.line else _code_at(ctx, use.rel, line)
        if replaced and (key not in cls.fields or (use.which == "speculative" and key == "method" and isinstance(value, str)
                                                   and cls.literals.get(key) and value not in cls.literals[key])):
            what, symbol = ((f"field `{key}`", f"{cls.qualname}.{key}") if key not in cls.fields
                            else (f"speculative method `{value}`", f"{cls.qualname}.method={value}"))
            yield ctx.unknown(RULE, f"{short} in {ctx.version_label()} has no {what}, but {replaced}: the object built may "
                                    "be the plugin's class, which may take it", _loc(use.rel, line, code), symbol=symbol)
            continue
        if key not in cls.fields:
            near = difflib.get_close_matches(key, list(cls.fields), n=3, cutoff=0.7)
            hint = f" (did you mean {', '.join(near)}?)" if near else ""
            if cls.extra in ("forbid", "typeerror"):
                # "passing it (--x-config) is a ValidationError when vLLM starts: pydantic refuses it (...)"
                what, why = (("a ValidationError", ": pydantic refuses it (extra fields are forbidden)") if cls.extra == "forbid"
                             else ("a TypeError", " (an unexpected keyword argument)"))
                yield ctx.finding(RULE, f"{short} in {ctx.version_label()} has no field `{key}`{hint}; passing it ({flag}) is {what} "
                                        f"when vLLM starts{why}.",
                                  _loc(use.rel, line, code), ctx.vllm_location(cls.path, cls.line), f"{cls.qualname}.{key}",
                                  when="call", fix=False, key=key)
            elif cls.extra == "ignore":
                yield ctx.finding(RULE, f"{short} in {ctx.version_label()} has no field `{key}`{hint}; pydantic drops it without a "
                                        f"word, so `{key}` has no effect.",
                                  _loc(use.rel, line, code), ctx.vllm_location(cls.path, cls.line), f"{cls.qualname}.{key}",
                                  when="silent", severity="warning", fix=False, key=key)
            continue
        allowed = cls.literals.get(key)
        if use.which == "speculative" and key == "method" and isinstance(value, str) and allowed and value not in allowed:
            near = difflib.get_close_matches(value, allowed, n=3, cutoff=0.6)
            hint = f" (close: {', '.join(near)})" if near else ""
            severity = "error" if cls.extra in ("forbid", "ignore") else "warning"  # pydantic validates a Literal
            yield ctx.finding(RULE, f"speculative method `{value}` is not one {ctx.version_label()} knows{hint}: "
                                    f"{short}.method allows {len(allowed)} values, and pydantic rejects any other (ValidationError).",
                              _loc(use.rel, line, code), ctx.vllm_location(cls.path, cls.fields.get("method", cls.line)),
                              f"{cls.qualname}.method={value}", when="call", severity=severity, fix=False, method=value)
    if use.which == "kv_transfer":
        yield from _check_connector(ctx, model, use)


def _check_connector(ctx: ScanContext, model: ServeModel, use: ConfigUse):
    entry = use.keys.get("kv_connector")
    if entry is None or not isinstance(entry[1], str) or "kv_connector_module_path" in use.keys:
        return  # computed, or the client's own class loaded from its module path
    line, name = entry
    if name in model.connectors:
        return
    own, own_open = ctx.once(_client_connectors)
    if name in own:
        return  # the client registers it on the factory itself (a plugin entry point: vllm-ascend's MooncakeConnectorV1)
    code = use.code if line == use.line else _code_at(ctx, use.rel, line)
    where = ctx.vllm_location(*model.factory) if model.factory else None
    replaced = _lookup_replaced(ctx, model, use.rel)
    if replaced:
        yield ctx.unknown(RULE, f"KV connector `{name}` is not registered in {ctx.version_label()}'s connector factory, but "
                                f"{replaced}: the client's replacement may answer for this name",
                          _loc(use.rel, line, code), symbol=f"kv_connector={name}")
        return
    if not model.connectors_complete or use.open or own_open:
        why = (f"the client registers connectors under names it computes ({own_open})" if own_open and model.connectors_complete
               and not use.open else "the registry (or this config) is not known in full")
        yield ctx.unknown(RULE, f"KV connector `{name}` is not registered in {ctx.version_label()}'s connector factory, but "
                                f"{why}", _loc(use.rel, line, code), symbol=f"kv_connector={name}")
        return
    near = difflib.get_close_matches(name, list(model.connectors), n=3, cutoff=0.6)
    hint = f" (registered names close to it: {', '.join(near)})" if near else ""
    fails = f"with `ValueError: Unsupported connector type: {name}`" if model.unsupported else \
        "when the factory looks it up (`ValueError: Unsupported connector type` or a `KeyError`, by engine version)"
    yield ctx.finding(RULE, f"KV connector `{name}` is not registered in {ctx.version_label()}{hint} and no "
                            f"kv_connector_module_path names a module for it: the engine fails to start {fails}."
                            f"{_stale_replacement(ctx, model, use.rel)}",
                      _loc(use.rel, line, code), where, f"kv_connector={name}", when="call", fix=False, connector=name)


def _lookup_replaced(ctx: ScanContext, model: ServeModel, rel: str) -> str | None:
    """"the client replaces `KVConnectorFactory._get_connector_class_with_compat` (file:line), through which ..." when
    the client rebinds one of the release's factory methods a connector name passes through on its way to the lookup
    that raises (`ServeModel.factory_path`: the lookup and the methods calling it), in the file of the config (exo's
    test_kv_extract.py patches the lookup to return its own connector for its own name, then starts the engine) or
    anywhere when the client registers a vLLM plugin (its entry point runs in every vLLM process). A rebinding of a
    method the release does not have, or of one the lookup never passes through (`register_connector`), changes
    nothing: the name stays an error (VA1)."""
    if not model.factory_class:
        return None
    plugin = bool(plugin_groups(ctx.client))
    short = model.factory_class.rsplit(".", 1)[-1]
    for method in model.factory_path:
        for r in ctx.usage.rebound.get((model.factory_class, method), ()):
            if plugin or r.where.rsplit(":", 1)[0] == rel:
                return (f"the client replaces `{short}.{method}` ({r.where}), through which {ctx.version_label()} "
                        "looks the name up")
    return None


def _stale_replacement(ctx: ScanContext, model: ServeModel, rel: str) -> str:
    """" The client's rebinding of `KVConnectorFactory._get_connector_class_with_compat` (file:line) sets a method
    vLLM 0.22.0's factory does not have: nothing calls it." when this file rebinds a factory method the release lacks
    (a lookup an older release had), else ""."""
    if not model.factory_class:
        return ""
    short = model.factory_class.rsplit(".", 1)[-1]
    for (owner, method), rebinds in ctx.usage.rebound.items():
        if owner != model.factory_class or isinstance(ctx.api.resolve(f"{owner}.{method}"), Resolved):
            continue
        for r in rebinds:
            if r.where.rsplit(":", 1)[0] == rel:
                return (f" The client's rebinding of `{short}.{method}` ({r.where}) sets a method "
                        f"{ctx.version_label()}'s factory does not have: nothing calls it.")
    return ""


def _client_connectors(ctx: ScanContext) -> tuple[frozenset, str | None]:
    """The connector names the client itself puts in the release's factory (`KVConnectorFactory.register_connector(
    "Name", module, cls)`, as a platform plugin's entry point does: vllm-ascend's `register_connector()`), and where it
    registers one under a computed name (then any name may be registered). Read from the call's syntax, the receiver
    being the factory class the file imports from the release's factory module: a test that monkeypatches
    `register_connector` to capture the names does not make the plugin's own calls someone else's."""
    model = serve_model(ctx.api)
    if model.factory is None:
        return frozenset(), None
    rel, line = model.factory
    tree = ctx.api.parse(rel)
    registry = next((n.name for n in (tree.body if tree is not None else ()) if isinstance(n, ast.ClassDef)
                     and n.lineno <= line <= (n.end_lineno or n.lineno)), None)
    if registry is None:
        return frozenset(), None
    module = module_name_for(rel)
    names: set[str] = set()
    computed = None
    for file in ctx.usage.files:
        if "register_connector" not in file.text or registry not in file.text:
            continue
        # the names the file binds to the release's factory class: `from <module> import Registry [as R]`
        bound = {a.asname or a.name for n in nodes_of(file.tree, ast.ImportFrom) if n.module == module
                 and not n.level for a in n.names if a.name == registry}
        for node in nodes_of(file.tree, ast.Call):
            if not (isinstance(node.func, ast.Attribute) and node.func.attr == "register_connector"):
                continue
            receiver = dotted_name(node.func.value) or ""
            if not (receiver in bound or receiver == f"{module}.{registry}"):
                continue
            first = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "name"), None)
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                names.add(first.value)
            elif computed is None:
                computed = f"{file.rel}:{node.lineno}"
    return frozenset(names), computed


_IMAGE = re.compile(r"""^\s*(?:-\s*)?image:\s*["']?([^\s"']+)|^\s*FROM\s+(?:--\S+\s+)*([^\s]+)""", re.IGNORECASE)
_TAG_RELEASE = re.compile(r"^v?(\d+\.\d+\.\d+)(?![\w.])")


def _pinned_image(ctx: ScanContext, launch: Launch) -> tuple[str, int, str] | None:
    """(image, line, release) where a YAML manifest or Dockerfile runs this launch in a vLLM container image whose tag
    names a release other than the target (`image: vllm/vllm-openai:v0.10.2`, `FROM vllm/vllm-openai:v0.10.2`): the
    nearest such line before the launch in its YAML document (after the last `---`) or Dockerfile. The command runs on
    that image's vLLM, not on the one scanned against. None otherwise (a tag that names no release, `latest`, `${V}`)."""
    if not ctx.api.version:
        return None
    if launch.image is not None:  # a container spec's or `docker run`'s own image (`container_launches`)
        ref, line = launch.image
        release = _image_release(ref)
        return (ref, line, release) if release and release != ctx.api.version else None
    if launch.kind not in ("yaml", "dockerfile"):
        return None
    lines = next((f.lines for f in ctx.client.launch_files() if f.rel == launch.rel), None)
    for number in range(min(launch.line, len(lines or ())) - 1, -1, -1):
        text = lines[number]
        if launch.kind == "yaml" and text.startswith("---"):
            return None
        m = _IMAGE.match(text)
        ref = (m.group(1) or m.group(2)) if m else None
        if not ref or (launch.kind == "yaml") != bool(m.group(1)):
            continue
        release = _image_release(ref)
        if release is None:
            return None  # the nearest image is not a vLLM release image: the launch may run the target
        return (ref, number + 1, release) if release != ctx.api.version else None
    return None


def _image_release(ref: str) -> str | None:
    """The vLLM release an image's tag names, where the image's name says vLLM (`vllm/vllm-openai:v0.10.2`);
    `ghcr.io/llm-d/llm-d-cuda:v0.9.0` is llm-d's release, not vLLM's, and `latest` names none."""
    name, _, tag = ref.rpartition(":") if ":" in ref.rsplit("/", 1)[-1] else (ref, "", "")
    release = _TAG_RELEASE.match(tag) if "vllm" in name.rsplit("/", 1)[-1].lower() else None
    return release.group(1) if release else None


def _code_at(ctx: ScanContext, rel: str, line: int) -> str:
    for f in ctx.client.launch_files():
        if f.rel == rel:
            return f.lines[line - 1].strip() if 0 < line <= len(f.lines) else ""
    return ""


def _check_llm(ctx: ScanContext, model: ServeModel, call):
    if model.llm_forwards is None or not model.engine_fields:
        return
    replaced = None
    if _loads_plugins_before(ctx, call):
        replaced = plugin_replaces(ctx.client, ctx.usage, [(q, m) for q in model.engine_classes for m in _BUILDS])
    for kw in call.node.keywords:
        if kw.arg is None or kw.arg in model.llm_kwargs or kw.arg in model.engine_fields:
            continue
        near = difflib.get_close_matches(kw.arg, list(model.engine_fields) + list(model.llm_kwargs), n=3, cutoff=0.75)
        hint = f" (did you mean {', '.join(near)}?)" if near else ""
        loc = Loc(call.loc.path, kw.value.lineno, call.loc.col, call.file.code(kw.value.lineno))
        if replaced:
            yield ctx.unknown(RULE, f"`LLM({kw.arg}=...)`: neither LLM.__init__ nor EngineArgs in {ctx.version_label()} takes "
                                    f"`{kw.arg}`{hint}, but this file loads vLLM's plugins first and {replaced}: the object "
                                    "built may be the plugin's class, which may take it", loc, symbol=f"vllm.LLM.{kw.arg}")
            continue
        yield ctx.finding(RULE, f"`LLM({kw.arg}=...)`: neither LLM.__init__ nor EngineArgs in {ctx.version_label()} takes `{kw.arg}`{hint}; "
                                "LLM hands its **kwargs to EngineArgs(...), which raises TypeError.",
                          loc, ctx.vllm_location(*model.llm_forwards), f"vllm.LLM.{kw.arg}", when="call", fix=False, keyword=kw.arg)


# what decides which class a constructor call builds and what it takes
_BUILDS = ("__new__", "__init__")


def _loads_plugins_before(ctx: ScanContext, call) -> bool:
    """The call's file calls vLLM's `load_general_plugins()` on an earlier line."""
    return any(c.loc.path == call.loc.path and c.loc.line < call.loc.line
               and c.target.qualname.rsplit(".", 1)[-1] == "load_general_plugins" and c.target.qualname.startswith("vllm.")
               for c in ctx.usage.calls)
