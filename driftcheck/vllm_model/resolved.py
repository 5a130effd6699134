"""What a question to the vLLM model answers: a definition found (`Resolved`), one that is not there
(`Missing`, with where we looked and the names close to it), one that cannot be known (`Unknown`),
a name outside the target (`External`), a member only a subclass defines (`InSubclass`).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from driftcheck.vllm_model.module_summary import ClassInfo, FunctionInfo, ModuleInfo


@dataclass
class Resolved:
    kind: str  # module | class | function | method | attribute | value
    qualname: str
    path: str
    line: int
    module: ModuleInfo | None = None
    cls: ClassInfo | None = None
    func: FunctionInfo | None = None
    owner: "Resolved | None" = None  # the class a method/attribute was found on
    type_only: bool = False
    deprecated: bool = False
    type_expr: str | None = None  # attribute annotation or inferred constructor
    otherwise: "Resolved | None" = None  # a class name an `if` rebinds: the class it names when that branch is not taken;
    # a method or property found through such a name: the other class's member of that name (`class_member`)


@dataclass
class Missing:
    qualname: str
    reason: str
    path: str = ""  # where we looked (module or class file)
    line: int = 0
    candidates: tuple[str, ...] = ()  # the names that are there, among which `near` looks for the missing one

    @property
    def near(self) -> list[str]:
        """Up to three of `candidates` close to the missing name, found when a report reads them: most Missing
        results answer a question a rule asks and drops (difflib over a class's members, for each, was 3% of a
        whole-platform client's scan)."""
        return close_matches(self.qualname.rsplit(".", 1)[-1], list(self.candidates)) if self.candidates else []


@dataclass
class Unknown:
    qualname: str
    reason: str
    read_hook: bool = False  # open only through `__getattr__` / `__getattribute__`: a store never consults them


@dataclass
class InSubclass:
    """Missing on the declared class, but defined by a subclass in the tree: the object may be one of those."""

    qualname: str
    subclass: str  # the subclass that defines it (dotted)
    path: str  # where
    line: int
    others: int = 0  # how many more subclasses of the tree define it too (the message must not say "only")


@dataclass
class External:
    qualname: str


Result = Resolved | Missing | Unknown | External | InSubclass


def close_matches(name: str, candidates: list[str]) -> list[str]:
    # each name once: a class and a base of its MRO that both define a method list it twice
    return list(_close_matches(name, tuple(dict.fromkeys(candidates))))


@functools.lru_cache(maxsize=8192)
def _close_matches(name: str, candidates: tuple[str, ...]) -> tuple[str, ...]:
    """Asked again for every use of the same missing member (a whole-platform client reads one missing attribute of
    a class from many files); difflib compares the name with every candidate each time."""
    import difflib

    return tuple(difflib.get_close_matches(name, candidates, n=3, cutoff=0.6))
