"""A value annotated with an abstract vLLM class that nothing in the tree derives from is some other class.

From the self-scans of vLLM 0.8.5 and 0.10.2: `SequenceGroupOutput` is an ABC with abstract `__repr__`/`__eq__`; its
implementations (`CompletionSequenceGroupOutput`, msgspec structs) say `__metaclass__ = SequenceGroupOutput` instead
of deriving from it, so `outputs: SequenceGroupOutput` holds a class the annotation does not describe and
`outputs.samples` (which it has) was a false error.
"""

from __future__ import annotations

from scan.helpers import scan_trees


def _vllm(derives: bool) -> dict[str, str]:
    return {"vllm/sequence.py": f"""
        from abc import ABC, abstractmethod


        class SequenceGroupOutput(ABC):
            @abstractmethod
            def __repr__(self) -> str:
                pass


        class CompletionSequenceGroupOutput({"SequenceGroupOutput" if derives else ""}):
            __metaclass__ = SequenceGroupOutput

            def __init__(self, samples):
                self.samples = samples

            def __repr__(self) -> str:
                return "c"
    """}


CLIENT = {"pkg/__init__.py": "", "pkg/process.py": """
    from vllm.sequence import SequenceGroupOutput


    def first_sample(outputs: SequenceGroupOutput):
        return outputs.samples[0]
"""}


def test_a_member_read_on_an_abstract_class_nothing_derives_from_is_unknown(tmp_path):
    result = scan_trees(tmp_path, _vllm(derives=False), CLIENT, only=["DC006"])
    assert [f for f in result.findings if f.severity == "error"] == []
    assert any("abstract and nothing in vLLM derives from it" in u.message for u in result.unknown)


def test_with_a_subclass_in_the_tree_the_usual_answer_stands(tmp_path):
    """A subclass that defines the member: the member is a subclass's (a warning), as before."""
    result = scan_trees(tmp_path, _vllm(derives=True), CLIENT, only=["DC006"])
    assert [(f.severity, f.client.line) for f in result.findings] == [("warning", 5)]
    assert not any("abstract and nothing" in u.message for u in result.unknown)


def test_a_concrete_implementation_or_a_class_without_abcmeta_keeps_the_error(tmp_path):
    """lmcache 0.3.9 reads `FlashAttentionImpl.num_heads_q` (members of the metadata builder, never of the impl): the
    impl overrides every abstract method of `AttentionImpl(ABC)`, so objects of it exist and the error is real. An
    `@abstractmethod` on a class without ABCMeta does not stop anyone making one either."""
    vllm = {"vllm/attention.py": """
        from abc import ABC, abstractmethod


        class AttentionImpl(ABC):
            @abstractmethod
            def forward(self, x):
                raise NotImplementedError


        class FlashAttentionImpl(AttentionImpl):
            def __init__(self):
                self.scale = 1.0

            def forward(self, x):
                return x


        class Plain:
            @abstractmethod
            def forward(self, x):
                raise NotImplementedError
    """}
    client = {"pkg/__init__.py": "", "pkg/sched.py": """
        from vllm.attention import FlashAttentionImpl, Plain


        def schedule(impl: FlashAttentionImpl, plain: Plain):
            return impl.num_heads_q, plain.num_heads_kv
    """}
    result = scan_trees(tmp_path, vllm, client, only=["DC006"])
    assert sorted(f.symbol.rsplit(".", 1)[-1] for f in result.findings if f.severity == "error") == \
        ["num_heads_kv", "num_heads_q"]
