"""The vLLM worker classes a platform plugin's own worker takes the place of.

A platform plugin names its own worker (`parallel_config.worker_cls = "pkg.worker.NPUWorker"` in its config hook,
`Usage.worker_classes`), and vLLM's worker wrapper builds that class by name. vLLM's other workers of the same family
(the CUDA `Worker`, `XPUWorker`) are other platforms': what they call on the model runner or weight engine they build
themselves never reaches the plugin's subclass of that runner, which the plugin's own worker builds (26n: vllm-ascend's
`NPUModelRunner(GPUModelRunner)` and vLLM 0.34.0's `gpu_worker.Worker.initialize_from_config` passing
`kv_cache_allocation_context=`). A vLLM class counts as another platform's worker when it derives from a vLLM
class the plugin's worker derives from directly, without being one of its bases, and the client names no worker of
vLLM's own, derives no class from it, and neither imports nor patches it.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from driftcheck.astnodes import nodes_of
from driftcheck.client_model.client_classes import vllm_bases_through
from driftcheck.vllm_model.resolved import Resolved


@dataclass(frozen=True)
class OwnWorkers:
    labels: tuple[str, ...]  # the client's worker classes, as its `worker_cls` strings name them
    family: frozenset[str]  # vLLM classes of their MROs
    roots: frozenset[str]  # their own vLLM bases: another platform's worker derives from one of them too
    derived: frozenset[str]  # vLLM classes of the MRO of any client class: run through the client's subclasses


def own_workers(ctx) -> OwnWorkers | None:
    """The client's own workers, once per scan; None unless every `worker_cls` the client names is a class of its own
    whose vLLM bases are read."""
    return ctx.once(_own_workers)


def _own_workers(ctx) -> OwnWorkers | None:
    named = sorted({dotted for dotted, _loc in ctx.usage.worker_classes})
    if not named or any(d.split(".")[0] == ctx.api.package for d in named):
        return None  # no worker of its own, or one of vLLM's: vLLM's workers run with the client's objects
    api, family, roots = ctx.api, set(), set()
    for label in named:
        bases = vllm_bases_through(ctx.usage, api, [label])
        if not bases:
            return None  # a worker of no vLLM family read here: which vLLM workers it stands in for is unknown
        for base in bases:
            roots.add(base.qualname)
            family |= {c.qualname for c in api.mro(base)[0]}
    derived: set[str] = set()
    for quals in ctx.usage.client_vllm_bases.values():
        for qual in quals:
            found = api.resolve(qual)
            if isinstance(found, Resolved) and found.kind == "class":
                derived |= {c.qualname for c in api.mro(found)[0]}
    prefix = ctx.api.package + "."
    return OwnWorkers(tuple(named), frozenset(q for q in family if q.startswith(prefix)), frozenset(roots),
                      frozenset(derived))


def other_platforms_worker(ctx, cls: Resolved | None) -> OwnWorkers | None:
    """The client's own workers when vLLM's class `cls` is another platform's worker (see the module's docstring);
    None when `cls` may run with the client's objects."""
    own = own_workers(ctx) if cls is not None else None
    if own is None or cls.qualname in own.family or cls.qualname in own.derived:
        return None
    ancestors = [c.qualname for c in ctx.api.mro(cls)[0][1:]]
    if not any(q in own.roots for q in ancestors) or _touched(ctx, cls.qualname):
        return None
    return own


def _touched(ctx, qualname: str) -> bool:
    """Whether any client file imports the class (or reads it off its module), or sets or replaces anything on it. The
    client's files are read, not the unit's imports: a unit holds only its own file's."""
    module, _, name = qualname.rpartition(".")
    usage = ctx.usage
    if any(owner == qualname for owner, _name in usage.patched) or any(owner == qualname for owner, _n in usage.rebound):
        return True
    for file in ctx.client.files:
        if name not in file.text:
            continue
        for node in nodes_of(file.tree, ast.ImportFrom, ast.Attribute):
            if isinstance(node, ast.ImportFrom) and node.module == module and any(a.name == name for a in node.names):
                return True
            if isinstance(node, ast.Attribute) and node.attr == name:
                return True  # `gpu_worker.Worker`: read off some module or object
    return False
