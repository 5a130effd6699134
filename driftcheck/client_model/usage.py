"""The client side: every use the client makes of vLLM, with light type inference.

For each client file we record vLLM imports, calls (constructors, functions, methods of inferred
vLLM objects), attribute reads/writes on inferred vLLM objects, `collective_rpc("name")` string
dispatch, and functions whose `self` is a vLLM object we cannot type (bound with
`types.MethodType`, assigned over a model's `forward`, or methods of a worker extension named in
`worker_extension_cls=`). `prepare_client` runs the phases over all files (phases.py), each file's
visit (visitor.py) follows, and `finish_client` credits the members the client sets itself
(client_stores.py). The records are in uses.py, the inference in inference.py.
"""

from __future__ import annotations

import ast
import re

from driftcheck.astnodes import nodes_of
from driftcheck.client_model.client import ClientSource, own_packages
from driftcheck.client_model.client_classes import DOTTED_CLASS, flag_values
from driftcheck.client_model.computed_names import string_constants
from driftcheck.client_model.client_stores import credit_client_stores
from driftcheck.client_model.open_extensions import open_extensions
from driftcheck.client_model.import_hooks import import_hook_redirects
from driftcheck.client_model.drop_ins import drop_in_copies
from driftcheck.client_model.launcher_copies import launcher_installed
from driftcheck.client_model.text_patchers import rewritten_files
from driftcheck.client_model.partial_trees import missing_subpackage
from driftcheck.client_model.overlay import in_overlay, mounted_copies, overlay_modules
from driftcheck.client_model.source_diffs import diff_creates_module
from driftcheck.client_model.uses import Loc, Usage
from driftcheck.client_model.visitor import FileAnalyzer
from driftcheck.sources.sources import SourceTree
from driftcheck.vllm_model.api_index import ApiIndex


def analyse_client(client: ClientSource, api: ApiIndex) -> Usage:
    usage, analyzers = prepare_client(client, api)
    for analyzer in list(analyzers.values()):
        _guarded_phase(lambda a: a.analyse(), analyzer, analyzers, usage)
    finish_client(usage, api)
    return usage


def finish_client(usage: Usage, api: ApiIndex) -> None:
    """What needs every file's uses: members the client itself sets on typed objects (rules that read it
    declare `Rule.whole_client`, so units.py runs them after every file was visited)."""
    credit_client_stores(usage, api)


def client_provides(usage: Usage, client: SourceTree, vllm: SourceTree, module: str) -> bool:
    """Whether the client itself provides vLLM module `module`: a file of its overlay (or inside one), a file its
    launcher installs into vLLM's package, a drop-in copy, or a module one of its source diffs creates."""
    return in_overlay(usage.overlay, module) or module in usage.installed or module in usage.drop_ins \
        or diff_creates_module(client, vllm, module) is not None


def prepare_client(client: ClientSource, api: ApiIndex) -> tuple[Usage, dict[str, "FileAnalyzer"]]:
    """The phases over all files; what is left is each file's own visit (`analyse`, see units.py)."""
    usage = Usage(files=client.files)
    usage.own_packages = own_packages(client)
    usage.partial_package = missing_subpackage(client, api.package)
    usage.overlay, usage.shadowed = overlay_modules(client, api)
    usage.mounted = mounted_copies(client, api)
    usage.redirected = import_hook_redirects(client, api.package)
    usage.installed = launcher_installed(client, api.package, lambda m: api.module(m) is not None)
    usage.rewritten = rewritten_files(client, api.package, api.tree.is_file)
    for module, (copy, _where) in [*usage.mounted.items(), *usage.redirected.items()]:
        usage.shadowed.setdefault(module, (copy, ""))
    usage.drop_ins = drop_in_copies(client, api)
    for module, (copy, _where) in usage.drop_ins.items():
        if api.module_path(module) is not None:  # a release module the copy may replace (one only the copy provides:
            usage.shadowed.setdefault(module, (copy, ""))  # DC001's unknown)
    for module in usage.overlay:  # importing it sets it on the vLLM package above it, as any submodule
        parent, _, leaf = module.rpartition(".")
        if parent not in usage.overlay:
            usage.patched.add((parent, leaf))
    analyzers: dict[str, FileAnalyzer] = {}
    # Phases over all files: what the client defines and patches anywhere is known before any use is checked.
    phases = [lambda a: a.collect_imports(), lambda a: a.collect_patches(), lambda a: a.prepare_classes(),
              lambda a: a.record_client_classes(), lambda a: a.register_subclasses(), lambda a: a.register_stand_ins(),
              lambda a: a.collect_worker_extensions()]
    registered: dict[str, list[tuple[str, str]]] = {}  # the class phases' table of registrations, from every file
    for file in client.files:
        analyzers[file.module] = FileAnalyzer(api, file, usage, api.package)
        analyzers[file.module].registered_classes = registered
        analyzers[file.module].client_source = client  # client modules that import no vLLM, read on demand
    for phase in phases:
        for analyzer in list(analyzers.values()):
            _guarded_phase(phase, analyzer, analyzers, usage)
    usage.set_by_path = {module: sorted(set(names)) for module, names in sorted(usage.set_by_path.items())}
    usage.worker_extensions += _extension_defaults(client, {f.rel for f in client.files})
    usage.open_extensions = open_extensions(client.files)
    # A worker extension named by string becomes part of the worker: its `self` is a vLLM worker.
    for dotted, _loc in usage.worker_extensions:
        module, _, cls_name = dotted.rpartition(".")
        analyzer = analyzers.get(module) or analyzers.get("src." + module)  # a `src/` layout's module (FA2)
        if analyzer is not None:
            analyzer.add_worker_extension(cls_name)
    return usage, analyzers


def _extension_defaults(client: ClientSource, seen: set[str]) -> list[tuple[str, Loc]]:
    """A worker extension the client names in a file that imports no vLLM: the default of a field or variable of
    that name (areal's `worker_extension_cls: str = "areal...Ext"` in a dataclass of server flags, which reach
    vLLM's own argument parser) or `add_argument("--worker-extension-cls", default=...)`."""
    out: list[tuple[str, Loc]] = []
    for rel in client.tree.iter_files(""):
        if rel in seen:
            continue
        try:
            text = client.tree.read_text(rel)
        except Exception:  # unreadable: nothing to add
            continue
        if "worker_extension_cls" not in text and "worker-extension-cls" not in text:
            continue
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError, RecursionError):
            # newer syntax than this Python reads (areal's cli_args.py has a PEP 695 function): the plain string
            # defaults, from the text, rather than no extension at all (every rpc to it would read as missing)
            out += _extension_defaults_in_text(rel, text)
            continue
        for node in nodes_of(tree, ast.Assign, ast.AnnAssign, ast.Call):
            if isinstance(node, ast.Call):
                flag = node.args[0] if node.args and isinstance(node.args[0], ast.Constant) else None
                value = next((k.value for k in node.keywords if k.arg == "default"), None) \
                    if flag is not None and flag.value == "--worker-extension-cls" else None
            else:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                named = any((t.id if isinstance(t, ast.Name) else getattr(t, "attr", "")).lower() == "worker_extension_cls"
                            for t in targets)
                value = node.value if named else None
            if isinstance(value, ast.Constant) and isinstance(value.value, str) and DOTTED_CLASS.match(value.value):
                line = value.lineno
                out.append((value.value, Loc(rel, line, value.col_offset + 1, text.splitlines()[line - 1].strip())))
        # the serve flag in an argument list, its value a string or a module constant of this file (FA1)
        for value in flag_values(tree, "--worker-extension-cls"):
            for name in string_constants(value, tree):
                if DOTTED_CLASS.match(name):
                    line = value.lineno
                    out.append((name, Loc(rel, line, value.col_offset + 1, text.splitlines()[line - 1].strip())))
    return out


# `worker_extension_cls: str = "pkg.Ext"` (also in parentheses) and `add_argument("--worker-extension-cls", ...,
# default="pkg.Ext")`, read from the text of a file this Python cannot parse
_EXTENSION_DEFAULT = re.compile(r"""\bworker_extension_cls\s*(?::[^=\n]*)?=\s*\(?\s*["']([\w.]+)["']"""
                                r"""|["']--worker-extension-cls["'][^)]*?\bdefault\s*=\s*["']([\w.]+)["']""", re.I)


def _extension_defaults_in_text(rel: str, text: str) -> list[tuple[str, Loc]]:
    out = []
    lines = text.splitlines()
    for m in _EXTENSION_DEFAULT.finditer(text):
        value = m.group(1) or m.group(2)
        if DOTTED_CLASS.match(value):
            line = text.count("\n", 0, m.start()) + 1
            out.append((value, Loc(rel, line, 1, lines[line - 1].strip() if line <= len(lines) else "")))
    return out


def _guarded_phase(phase, analyzer: "FileAnalyzer", analyzers: dict, usage: Usage) -> None:
    """A file too deeply nested for the analysis (a 2,500-long attribute chain) is reported, never a crash."""
    try:
        phase(analyzer)
    except RecursionError:
        analyzers.pop(analyzer.file.module, None)
        usage.unanalysed.append((analyzer.file.rel, "expressions nested too deeply to follow"))
