"""One reading of `except` clauses (client_model/except_clauses.py) for the guard pass, the import phase, the
refusals and the preconditions."""

import ast

import pytest

from driftcheck.client_model.except_clauses import ANY, exception_tuples, handler_catches, handler_names, only_import_errors


def _handler(src: str) -> ast.ExceptHandler:
    tree = ast.parse(f"try:\n    pass\n{src}\n    pass\n")
    return tree.body[0].handlers[0]


@pytest.mark.parametrize("clause,raised,caught", [
    ("except ImportError:", "ImportError", True),
    ("except ImportError:", "ModuleNotFoundError", True),  # a subclass of what it names
    ("except ModuleNotFoundError:", "ModuleNotFoundError", True),
    ("except ModuleNotFoundError:", "ImportError", False),  # a name its module lacks: the plain ImportError (25f F3)
    ("except (AttributeError, ModuleNotFoundError):", "ImportError", False),
    ("except builtins.ImportError:", "ImportError", True),
    ("except Exception:", "ImportError", True),
    ("except:", "TypeError", True),
    ("except TypeError:", "ImportError", False),
])
def test_handler_catches(clause, raised, caught):
    assert handler_catches(_handler(clause), raised) is caught


def test_names_spell_out_a_file_tuple_and_broad_classes():
    tree = ast.parse("ERRS = (ImportError, AttributeError)\ntry:\n    pass\nexcept ERRS:\n    pass\n"
                     "try:\n    pass\nexcept (BaseException, KeyError):\n    pass\n")
    tuples = exception_tuples(tree)
    first, second = tree.body[1].handlers[0], tree.body[2].handlers[0]
    assert handler_names(first, tuples) == {"ImportError", "AttributeError"}
    assert handler_catches(first, "ModuleNotFoundError", tuples)
    assert not handler_catches(first, "ModuleNotFoundError")  # without the tuple, `ERRS` is just a name
    assert handler_names(second) == {ANY, "KeyError"}


def test_a_tuple_rebound_later_is_not_read():
    tree = ast.parse("ERRS = (ImportError,)\nERRS = (KeyError,)\n")
    assert exception_tuples(tree) == {}


@pytest.mark.parametrize("clause,only", [
    ("except ImportError:", True),
    ("except (ImportError, ModuleNotFoundError):", True),
    ("except (ImportError, AttributeError):", False),
    ("except Exception:", False),
    ("except:", False),
])
def test_only_import_errors(clause, only):
    assert only_import_errors(_handler(clause)) is only
