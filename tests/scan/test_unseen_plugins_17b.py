"""Root causes of false errors from batch 17b (PyPI clients at the vLLM each declares,
docs/triage/2026-12-04-unseen-plugins-17b.md): the shape that runs (no error), and the same shape where the code
really breaks on vLLM, which must stay an error.
"""

from __future__ import annotations

from scan.helpers import scan_trees

# ----------------------------------------------------------------------------------------- LA
# mjolnir-kernel 0.1.0 (README: stock vLLM 0.31.0), mjolnir/backend.py:138 `return
# AttentionBackendEnum[_FALLBACK].get_class()`. Subscripting an Enum class by a member's name gives that member
# (EnumMeta.__getitem__; vLLM 0.31.0's metaclass `_AttentionBackendEnumMeta.__getitem__` only returns
# `super().__getitem__(name)`), and `get_class` is bound to it. driftcheck read `Cls[x]` as the class (a
# subscripted generic) and reported `get_class()` unbound: DC005 "does not pass 'self'".
REGISTRY = '''
from enum import Enum, EnumMeta


class _Meta(EnumMeta):
    def __getitem__(cls, name):
        try:
            return super().__getitem__(name)
        except KeyError:
            raise ValueError(name) from None


class AttentionBackendEnum(Enum, metaclass=_Meta):
    FLASHINFER = "vllm.flash.FlashInferBackend"

    def get_class(self):
        return self.value


class Priority(Enum):
    HIGH = 1

    def rank(self):
        return self.value


class _Lookup(EnumMeta):
    def __getitem__(cls, name):
        return cls._classes[name]


class Registered(Enum, metaclass=_Lookup):
    A = "a"

    def get_class(self):
        return self.value
'''
VLLM = {"vllm/__init__.py": "", "vllm/registry.py": REGISTRY}


def _errors(tmp_path, body: str) -> list[str]:
    client = {"plugin/__init__.py": "", "plugin/backend.py": "from vllm.registry import AttentionBackendEnum, Priority, "
              "Registered\n\n\ndef f(name):\n" + "".join(f"    {line}\n" for line in body.splitlines())}
    result = scan_trees(tmp_path, VLLM, client)
    return [f"{f.rule} {f.client.line}" for f in result.findings if f.severity == "error"]


def test_la_an_enum_member_looked_up_by_name_binds_its_methods(tmp_path):
    assert _errors(tmp_path, "x = AttentionBackendEnum[name].get_class()\nreturn x, Priority[name].rank()") == []


def test_la_a_method_the_member_lacks_stays_an_error(tmp_path):
    # the member is an object of the Enum: a method no class of its MRO defines fails as on any instance
    assert _errors(tmp_path, "return AttentionBackendEnum[name].get_klass()") == ["DC006 5"]


def test_la_a_call_the_members_method_rejects_stays_an_error(tmp_path):
    assert _errors(tmp_path, "return Priority[name].rank(1)") == ["DC004 5"]


def test_la_the_method_called_on_the_class_itself_stays_an_error(tmp_path):
    # no subscript: `get_class` is reached through the class and needs its `self`
    assert _errors(tmp_path, "return AttentionBackendEnum.get_class()") == ["DC005 5"]


def test_la_a_metaclass_getitem_returning_something_else_is_not_read_as_a_member(tmp_path):
    # `_Lookup.__getitem__` returns whatever its table holds: the subscript keeps the old reading (the class)
    assert _errors(tmp_path, "return Registered[name].get_class()") == ["DC005 5"]
