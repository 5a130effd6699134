"""The records of what the client uses: imports, calls, attribute reads and writes, string-dispatched
RPCs, functions whose `self` is a vLLM object, and where each one stands (`Loc`).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from driftcheck.client_model.client import ClientFile, first_file_by
from driftcheck.vllm_model.resolved import Resolved
from driftcheck.vllm_model.signatures import CallShape


@dataclass
class Loc:
    path: str
    line: int
    col: int
    code: str
    end_line: int = 0
    end_col: int = 0


@dataclass
class ImportUse:
    loc: Loc
    module: str
    name: str | None
    runtime_only: bool  # inside a function: fails only when that code runs
    guarded: bool  # inside try/except ImportError: the client expects it may be absent
    type_only: bool
    unreached: bool = False  # a fallback import in `except ImportError:` whose try body imports fine on the target
    handler_raises: bool = False  # its try's `except ImportError:` raises again: no fallback, the client's own error
    by_name: bool = False  # `importlib.import_module("vllm.x")`: a call, not a statement a fix could rewrite

    def guard_note(self) -> str:
        """Why a guarded import is a warning, said of what its handler does."""
        if self.handler_raises and not self.guarded:
            return (" The try around it catches the ImportError only to raise an error of the client's own: nothing "
                    "falls back, so the module cannot be imported on this vLLM.")
        if not self.guarded:
            return ""
        if self.handler_raises:
            return (" The import is guarded by a try whose ImportError handler raises an error of the client's own "
                    "instead: the code refuses this vLLM rather than falling back.")
        # the handler may name ImportError, ModuleNotFoundError, Exception or nothing: say what it does, not its name
        return " The import is guarded by a try whose handler catches ImportError, so the fallback path runs instead."


@dataclass
class Rebinding:
    """The client binds a vLLM module function or a class's `__init__` to something of its own (`vfc.set_forward_context
    = _set_forward_context`, `Cls.__init__ = _patched_init`): a call through that name may reach the replacement."""

    where: str  # "file:line" of the assignment
    name: str  # what it rebinds, as written: "vfc.set_forward_context"
    replacement: str | None  # the client function's dotted path ("pkg.ops.chunk"), None when it is not a function's name
    code: str  # the value assigned, as source text
    # the function object itself is changed (its `__code__` swapped by the client's patch framework, ArcticInference's
    # `patch_module_function`): every name bound to it, a package's re-export too, reaches the replacement (26h F1)
    in_place: bool = False


@dataclass
class CallUse:
    loc: Loc
    kind: str  # construct | function | method
    target: Resolved
    shape: CallShape
    node: ast.Call
    file: ClientFile
    runtime_only: bool = True
    driven_by_vllm: bool = False  # in a method of a client subclass of a vLLM class: vLLM's engine calls this code
    via_super: bool = False  # `super().m(...)`: the base's own method, whatever subclasses override
    rebound: list[Rebinding] = field(default_factory=list)  # the client's replacements the callee may be at run time
    # a method called on a value: the vLLM class the value is annotated or built as (a Protocol's method binds nothing certain)
    receiver: Resolved | None = None
    exact: bool = False  # the receiver is an object the client built of exactly that class: no subclass's override runs


@dataclass
class AttrUse:
    loc: Loc
    owner: Resolved  # the vLLM class of the receiver
    attr: str
    store: bool
    result: object  # Resolved | Missing | Unknown | External
    node: ast.Attribute
    file: ClientFile
    # why code driftcheck does not read may set the member: unknown if the client's own stores do not credit it
    unread_may_set: str | None = None
    # the receiver's class as an isinstance test around the line names it (`AsyncLLMEngine`, vLLM's alias of
    # `AsyncLLM`): that test picks the objects that lack the member, it does not spare them (26o M3)
    tested_as: tuple[str, ...] = ()


@dataclass
class NameProbe:
    """`getattr(numa_utils, "_can_set_mempolicy", None)` / `hasattr(Scheduler, "m")` on a vLLM module, class or object:
    the client asks whether the release has a name and falls back when it has not (DC125 compares the answer with the
    client's own vLLM)."""
    loc: Loc
    owner: str  # the module or class asked: "vllm.utils.numa_utils"
    name: str
    how: str  # "getattr" | "hasattr"
    on_module: bool
    result: object  # the target's answer: Resolved | Missing | Unknown | External


@dataclass
class ModuleAttrUse:
    loc: Loc
    module: str
    attr: str
    result: object
    runtime_only: bool


@dataclass
class RpcUse:
    loc: Loc
    method: str | None  # None when the method is not a string literal
    node: ast.Call
    file: ClientFile
    unique_reply_rank: bool
    # `self.collective_rpc(...)` in a client subclass of a vLLM class whose own `collective_rpc` (this def) replaces
    # vLLM's and never hands the call on: the client's dispatch picks the workers (VC1); `sender`: the sending class
    # and the client classes of its file it derives from, whose own methods serve no rpc
    own_override: Loc | None = None
    sender: frozenset[str] = frozenset()


@dataclass
class BoundFunction:
    """A client function whose `self` is a vLLM object of a type we cannot infer."""

    name: str
    how: str  # method-type | forward-assignment | worker-extension
    loc: Loc
    node: ast.FunctionDef | ast.AsyncFunctionDef
    file: ClientFile
    self_names: dict[str, Loc] = field(default_factory=dict)  # names read on `self` that the client never sets
    onto_class: str | None = None  # forward-assignment onto a vLLM class (`Cls.meth = fn`): `self` is typed, its qualname
    # every forward-assignment stores it where it is not bound: on a module (`mamba_utils.batch_memcpy = fn`, `torch.sum
    # = fn`) or on `self` of an instance method (`self.native_impl = fn`): its first parameter is an argument like the
    # others, no object's `self`; where (the first such target, as written)
    stored_unbound: str | None = None
    site: Loc | None = None  # where it is bound or stored (`types.MethodType(fn, obj)`, `obj.attr = fn`): for messages
    # every forward-assignment stores it on an object of a package vLLM itself requires or of the standard library
    # (`PreTrainedModel.resize_token_embeddings = fn`, `torch.Tensor.copy_ = fn`): its `self` is that package's object,
    # which cannot be a vLLM class; the object as written (TJ1)
    onto_foreign: str | None = None


@dataclass
class Usage:
    imports: list[ImportUse] = field(default_factory=list)
    calls: list[CallUse] = field(default_factory=list)
    attrs: list[AttrUse] = field(default_factory=list)
    module_attrs: list[ModuleAttrUse] = field(default_factory=list)
    rpcs: list[RpcUse] = field(default_factory=list)
    bound: list[BoundFunction] = field(default_factory=list)
    # patches naming a vLLM target by strings (client_model/patch_paths.py): DC001 / DC002 check what they look up
    patch_paths: list = field(default_factory=list)
    name_probes: list[NameProbe] = field(default_factory=list)  # getattr-with-default / hasattr of vLLM names (DC125)
    worker_extensions: list[tuple[str, Loc]] = field(default_factory=list)  # dotted class path, where named
    # `worker_cls="pkg.mod.Worker"` (a platform's config hook): the class vLLM's worker wrapper builds and forwards to
    worker_classes: list[tuple[str, Loc]] = field(default_factory=list)
    # (how, where) the client relies on a worker extension whoever builds the engine names (open_extensions.py)
    open_extensions: list[tuple[str, Loc]] = field(default_factory=list)
    client_set_attrs: set[str] = field(default_factory=set)  # attributes the client sets on foreign objects
    files: list[ClientFile] = field(default_factory=list)
    unanalysed: list[tuple[str, str]] = field(default_factory=list)  # (file, why) for files we could not follow
    patched: set[tuple[str, str]] = field(default_factory=set)  # (vLLM module/class qualname, name) the client sets
    grafted_classes: dict[str, list] = field(default_factory=dict)  # client class -> vLLM classes another file copies its methods onto
    # vLLM class -> member -> (client subclass, file, line) for members that client subclasses add
    subclass_members: dict[str, dict[str, tuple[str, str, int]]] = field(default_factory=dict)
    # vLLM class -> method -> [(client subclass.method, its signature)]: the overrides a base-typed call may reach
    client_overrides: dict[str, dict[str, list]] = field(default_factory=dict)
    client_subclass_members: dict[str, set[str]] = field(default_factory=dict)  # client class -> its subclasses' members
    # client class "module.Name" -> (its own members, the dotted names of its bases): ancestors across files
    client_class_table: dict[str, tuple[set[str], list[str]]] = field(default_factory=dict)
    # client class "module.Name" -> the vLLM classes its own file sees it derive from: a subclass in another file does too
    client_vllm_bases: dict[str, list[str]] = field(default_factory=dict)
    # method name -> [(class of x, file, line)] for calls `type(x).m(obj, ...)`: m's `self` may be another object
    unbound_called: dict[str, list[tuple[str, str, int]]] = field(default_factory=dict)
    # attribute -> [(registrar, "file:line", how the name was found)] for `obj.register_buffer(name, ...)` with a
    # computed name on an object other than `self`: objects that have that registrar may carry the attribute
    registered_by_name: dict[str, list[tuple[str, str, str]]] = field(default_factory=dict)
    # vLLM class -> [(client subclass, its __init__ signature, [(vLLM class, method) it is handed to])]: a class
    # whose `__new__` picks the class to build (`PluggableLayer.register_oot`) may build the client's subclass
    replacements: dict[str, list[tuple[str, object, list[tuple[str, str]]]]] = field(default_factory=dict)
    # (vLLM class, attribute) -> ("file:line", "Cls.method") for a member a client replacement of a vLLM method sets
    # on objects it cannot type, where the method is declared to return that class (`LLM.generate = _patched`)
    set_on_results: dict[tuple[str, str], tuple[str, str]] = field(default_factory=dict)
    # (vLLM module or class, name) -> the client's replacements of that function or `__init__` (Rebinding)
    rebound: dict[tuple[str, str], list[Rebinding]] = field(default_factory=dict)
    # (vLLM class, attribute, "file:line") for a store through a parameter annotated as a union of vLLM classes
    # (`self: "Attention | MLAAttention"`): the member is set on whichever class the object is (client_stores.py)
    union_stores: list[tuple[Resolved, str, str]] = field(default_factory=list)
    # packages the client imports that may depend on vLLM and that driftcheck does not read (unread_code.py)
    unread_packages: dict[str, str] | None = None
    # the top-level names of every module of the client's tree, whether or not it imports vLLM: its own packages
    own_packages: set[str] = field(default_factory=set)
    partial_package: str | None = None  # an import of a subpackage of the client's own the tree lacks (partial_trees)
    # vLLM class -> member -> (client class, "file:line" where the client hands one where the vLLM class is expected):
    # an object of a client class that does not derive from it, annotated or passed as it (duck typing)
    stand_ins: dict[str, dict[str, tuple[str, str]]] = field(default_factory=dict)
    # callee name -> [(parameter position or keyword, class of the value passed, file, line)]
    passed: dict[str, list[tuple[int | str, str, str, int]]] = field(default_factory=dict)
    # modules the client ships inside vLLM's package that the release lacks (overlay.py) -> its file or folder: its own
    overlay: dict[str, str] = field(default_factory=dict)
    # modules the release has that the client ships another copy of -> (client file, digest): which one runs depends
    # on which was installed last
    shadowed: dict[str, tuple[str, str]] = field(default_factory=dict)
    # of those, the ones a launcher copies or mounts a client file over -> (client file, "file:line" placing it)
    mounted: dict[str, tuple[str, str]] = field(default_factory=dict)
    # of those, the ones an import hook maps to a client module (import_hooks.py) -> (client file, "file:line" of the hook)
    redirected: dict[str, tuple[str, str]] = field(default_factory=dict)
    # modules the release lacks that the client's shell setup copies into the installed vLLM folder, from a source
    # driftcheck may not read (launcher_copies.py) -> "file:line" of the copy
    installed: dict[str, str] = field(default_factory=dict)
    # modules of vLLM's package a flat client folder holds a copy of, to be dropped into it (drop_ins.py) -> (client
    # file, "file:line" of the import of a sibling by vLLM's name)
    drop_ins: dict[str, tuple[str, str]] = field(default_factory=dict)
    # release files a client script rewrites in place (text_patchers.py) -> ("file:line", the names its text defines)
    rewritten: dict[str, tuple[str, list[str]]] = field(default_factory=dict)
    # vLLM module -> the names the client sets on it by its dotted path outside tests (`vllm.x.y.f = own_f`), whether
    # or not the target has the module (`patched` holds only what the target resolves): move-import leaves them
    set_by_path: dict[str, list[str]] = field(default_factory=dict)
    def client_packages(self) -> frozenset[str]:
        """Every client module and every package above one (`a.b.c`: a, a.b, a.b.c), made once: each file's class
        phase asks whether an import names the client's own code, and a whole-platform client has a thousand files.
        (Kept outside the fields: a unit's copy of the facts, with its one file, and the unit cache's digest of the
        facts must not see it.)"""
        found = self.__dict__.get("_client_packages")
        if found is None:
            parts = [f.module.split(".") for f in self.files]
            found = self.__dict__["_client_packages"] = frozenset(
                ".".join(p[:i]) for p in parts for i in range(1, len(p) + 1))
        return found

    def file_of_module(self, module: str):
        """The first of `files` that is `module` (a table made once per list of files)."""
        return first_file_by(self, self.files, "module").get(module)

    def file_at(self, rel: str):
        """The first of `files` at `rel` (a table made once per list of files)."""
        return first_file_by(self, self.files, "rel").get(rel)

    def checked(self) -> int:
        """How many uses of vLLM were looked up: the denominator of precision figures."""
        return len(self.imports) + len(self.calls) + len(self.attrs) + len(self.module_attrs) + len(self.rpcs) + \
            len(self.bound) + len(self.patch_paths)


def loc_of(file: ClientFile, node: ast.AST) -> Loc:
    line = getattr(node, "lineno", 1)
    return Loc(
        path=file.rel,
        line=line,
        col=getattr(node, "col_offset", 0) + 1,
        code=file.code(line),
        end_line=getattr(node, "end_lineno", line) or line,
        end_col=(getattr(node, "end_col_offset", 0) or 0) + 1,
    )


def call_shape(node: ast.Call) -> CallShape:
    n_pos = sum(1 for a in node.args if not isinstance(a, ast.Starred))
    return CallShape(
        n_positional=n_pos,
        keywords=[k.arg for k in node.keywords if k.arg is not None],
        star_args=any(isinstance(a, ast.Starred) for a in node.args),
        star_kwargs=any(k.arg is None for k in node.keywords),
    )
