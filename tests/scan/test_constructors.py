"""Constructors synthesised from class bodies: @dataclass, pydantic dataclasses, vLLM's @config.

The signature is compared with what Python itself builds: for plain dataclasses the test also
executes the same class body with the real `dataclasses` module and checks that the synthesised
signature has the same parameters, kinds and defaults-ness.
"""

from __future__ import annotations

import inspect
import textwrap

import pytest

from driftcheck.vllm_model.signatures import KWONLY, POS, CallShape, check_call

from scan.helpers import file_line, index

DATACLASS_BODY = """
    from dataclasses import KW_ONLY, InitVar, dataclass, field
    from typing import ClassVar


    @dataclass
    class Base:
        a: int
        b: str = "x"
        hidden: int = field(default=0, init=False)


    @dataclass
    class Child(Base):
        MAX: ClassVar[int] = 4
        c: InitVar[bool] = False
        d: list = field(default_factory=list)
        _: KW_ONLY
        e: int = 1
        f: float = field(default=0.5, kw_only=False)


    @dataclass(kw_only=True)
    class AllKw:
        x: int
        y: int = 2


    @dataclass
    class Redefines(Base):
        a: int = 5
        hidden: int = 0


    @dataclass
    class WithInit:
        a: int

        def __init__(self, only):
            self.a = only


    class Plain(Child):
        pass
"""


def _python_signature(cls_name: str) -> list[tuple[str, str, bool]]:
    """(name, kind, has_default) of the constructor Python's dataclasses really generate."""
    namespace: dict = {"__name__": "dc_fixture"}
    # dont_inherit: this module's `from __future__ import annotations` must not turn KW_ONLY into a string
    exec(compile(textwrap.dedent(DATACLASS_BODY), "<dataclasses>", "exec", dont_inherit=True), namespace)
    sig = inspect.signature(namespace[cls_name])
    kinds = {inspect.Parameter.POSITIONAL_OR_KEYWORD: POS, inspect.Parameter.KEYWORD_ONLY: KWONLY}
    return [(p.name, kinds[p.kind], p.default is not inspect.Parameter.empty) for p in sig.parameters.values()]


@pytest.mark.parametrize("cls_name", ["Base", "Child", "AllKw", "Redefines", "WithInit", "Plain"])
def test_dataclass_signature_matches_python(tmp_path, cls_name):
    api = index(tmp_path, {"vllm/cfg.py": DATACLASS_BODY})
    sig = api.constructor(api.resolve(f"vllm.cfg.{cls_name}"))
    assert [(p.name, p.kind, p.has_default) for p in sig.params] == _python_signature(cls_name)


def test_dataclass_params_point_at_their_field_lines(tmp_path):
    api = index(tmp_path, {"vllm/cfg.py": DATACLASS_BODY})
    sig = api.constructor(api.resolve("vllm.cfg.Child"))
    root = tmp_path / "vllm-src"
    # an inherited field points at the base's line, an InitVar at its own
    assert sig.get("a").line == file_line(root, "vllm/cfg.py", "a: int")
    assert sig.get("c").line == file_line(root, "vllm/cfg.py", "c: InitVar[bool]")
    assert sig.get("d").default == "list()"


def test_explicit_init_beats_fields(tmp_path):
    api = index(tmp_path, {"vllm/cfg.py": DATACLASS_BODY})
    sig = api.constructor(api.resolve("vllm.cfg.WithInit"))
    assert sig.origin == "def" and sig.names() == ["only"]
    assert check_call(sig, CallShape(0, ["a"]))[0].kind == "unknown-keyword"


CONFIG_UTILS = """
    from typing import Any

    from pydantic import ConfigDict
    from pydantic.dataclasses import dataclass


    def config(cls=None, *, config: ConfigDict | None = None, **kwargs: Any):
        merged_config = ConfigDict(extra="forbid")
        if config is not None:
            merged_config.update(config)

        def decorator(cls):
            return dataclass(cls, config=merged_config, **kwargs)

        if cls is None:
            return decorator
        return decorator(cls)
"""


def test_vllm_config_decorator_is_a_dataclass(tmp_path):
    # vLLM 0.16's vllm/config/utils.py: `@config` wraps pydantic's dataclass(...)
    api = index(tmp_path, {
        "vllm/config/utils.py": CONFIG_UTILS,
        "vllm/config/scheduler.py": """
            from dataclasses import InitVar
            from typing import ClassVar

            from pydantic import ConfigDict, Field

            from vllm.config.utils import config


            @config
            class SchedulerConfig:
                max_model_len: InitVar[int]
                is_encoder_decoder: InitVar[bool]
                DEFAULT_MAX_NUM_SEQS: ClassVar[int] = 128
                max_num_seqs: int = Field(default=DEFAULT_MAX_NUM_SEQS, ge=1)
                policy: str = Field(default="fcfs")


            @config(config=ConfigDict(arbitrary_types_allowed=True))
            class CacheConfig:
                block_size: int = Field(default=16)
                num_gpu_blocks: int | None = Field(default=None, init=False)
        """,
    })
    sched = api.resolve("vllm.config.scheduler.SchedulerConfig")
    assert api.is_dataclass_like(sched) == "pydantic"
    sig = api.constructor(sched)
    assert sig.origin == "dataclass"
    assert [(p.name, p.has_default) for p in sig.params] == [
        ("max_model_len", False), ("is_encoder_decoder", False), ("max_num_seqs", True), ("policy", True)]
    problems = check_call(sig, CallShape(0, ["max_model_len", "max_num_seqs"]))
    assert [(p.kind, p.name) for p in problems] == [("missing-argument", "is_encoder_decoder")]
    assert problems[0].param.line == file_line(tmp_path / "vllm-src", "vllm/config/scheduler.py", "is_encoder_decoder: InitVar")

    cache = api.resolve("vllm.config.scheduler.CacheConfig")  # @config(config=...) form
    assert api.is_dataclass_like(cache) == "pydantic"
    assert api.constructor(cache).names() == ["block_size"]


def test_pydantic_dataclass_decorator_directly(tmp_path):
    api = index(tmp_path, {
        "vllm/cfg.py": """
            from pydantic.dataclasses import dataclass
            import pydantic


            @dataclass
            class A:
                x: int


            @pydantic.dataclasses.dataclass(config={"extra": "forbid"})
            class B:
                y: int = 0
        """,
    })
    assert api.is_dataclass_like(api.resolve("vllm.cfg.A")) == "pydantic"
    assert api.constructor(api.resolve("vllm.cfg.B")).names() == ["y"]


def test_dataclass_fields_inherited_from_a_base_in_another_module(tmp_path):
    api = index(tmp_path, {
        "vllm/base.py": "from dataclasses import dataclass\n\n\n@dataclass\nclass Base:\n    a: int\n    b: int = 0\n",
        "vllm/child.py": """
            import dataclasses

            from vllm.base import Base


            @dataclasses.dataclass
            class Child(Base):
                c: int = 1
        """,
    })
    sig = api.constructor(api.resolve("vllm.child.Child"))
    assert sig.names() == ["a", "b", "c"]
    assert sig.get("a").line == 6  # in vllm/base.py, written above
    assert [p.kind for p in sig.params] == [POS, POS, POS]


def test_dataclass_with_init_false_keeps_the_inherited_init(tmp_path):
    api = index(tmp_path, {
        "vllm/x.py": """
            from dataclasses import dataclass


            class Base:
                def __init__(self, p, q=1):
                    pass


            @dataclass(init=False)
            class Child(Base):
                r: int = 0
        """,
    })
    assert api.constructor(api.resolve("vllm.x.Child")).names() == ["p", "q"]


def test_class_without_any_init_takes_no_arguments(tmp_path):
    api = index(tmp_path, {"vllm/x.py": "class Empty:\n    pass\n"})
    sig = api.constructor(api.resolve("vllm.x.Empty"))
    assert sig.params == [] and check_call(sig, CallShape(1, []))[0].kind == "too-many-positional"
