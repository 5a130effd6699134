"""Whether `Name(...)` builds the client class of that name as written: what the inference reads as an object of
the class (its members first, then its vLLM bases'), whether the class is defined in the calling file or another.
"""

from __future__ import annotations

import ast

from driftcheck.astnodes import top_level_bindings


def builds_as_written(tree: ast.Module, cls: ast.ClassDef, members: set[str]) -> bool:
    """`cls` is a statement of its module's top level and the only binding of its name there (a later assignment or
    a second class would be what a call reaches), with no class keyword (a metaclass may hand back anything) and no
    `__new__` of its own or a client base's (`members`), which may hand back another object."""
    return cls in tree.body and not cls.keywords and "__new__" not in members \
        and sum(1 for stmt in tree.body for name, _ in top_level_bindings(stmt) if name == cls.name) == 1
