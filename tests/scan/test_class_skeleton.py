"""class_skeleton: a class's member through its MRO read from its module's top level gives the answer reading the
whole module gives, or no answer (DC008's model classes)."""

from __future__ import annotations

import textwrap

from conftest import vllm_sources

from driftcheck.sources.sources import FolderTree, ZipTree
from driftcheck.vllm_model.api_index import ApiIndex
from driftcheck.vllm_model.class_skeleton import has_member, skeleton
from driftcheck.vllm_model.resolved import External, Resolved
from driftcheck.vllm_model.text_index import TextIndex

NAMES = ("get_input_embeddings", "embed_input_ids", "compute_logits", "load_weights", "hf_to_vllm_mapper",
         "packed_modules_mapping", "set_aux_hidden_state_layers", "zzz_not_a_member", "training", "state_dict")


def _whole_module_answer(api: ApiIndex, rel: str, cls: str, name: str) -> bool:
    module = rel[:-3].replace("/", ".").removesuffix(".__init__")
    found = api.resolve(f"{module}.{cls}")
    return isinstance(found, Resolved) and found.kind == "class" and found.cls is not None \
        and isinstance(api.member(found, name), (Resolved, External))


def test_agrees_with_the_whole_module_on_a_release():
    # every top-level class of vLLM 0.16.0's model files (the ones DC008 asks about), ten names each: where the
    # skeleton answers, the answer is the whole module's (six whole trees, 0.9.2 to 0.34.0, gave 467,168 answers and
    # no difference when this was written; the test reads a third of one folder of one to stay quick)
    tree = ZipTree(vllm_sources("0.16.0"))
    api, index = ApiIndex(tree, "0.16.0"), TextIndex(tree)
    answered = differ = 0
    files = sorted(r for r in index.blobs() if r.startswith("vllm/model_executor/models/") and r.endswith(".py"))
    for rel in files[::3]:
        text = index.blob(rel).decode("utf-8", "replace")
        for c in index.classes_in(rel):
            for name in NAMES:
                quick = has_member(api, text, rel, c.name, c.line, name)
                if quick is None:
                    continue
                answered += 1
                differ += quick != _whole_module_answer(api, rel, c.name, name)
    assert differ == 0
    assert answered > 1500  # the skeleton answers most questions, or it would save nothing


def _tree(tmp_path, files: dict[str, str]) -> ApiIndex:
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(textwrap.dedent(text))
    return ApiIndex(FolderTree(tmp_path), "0.0.0")


BASES = """
    class Mixin:
        def embed_input_ids(self, ids):
            return ids
"""

MODEL = """
    from torch import nn

    from vllm.bases import Mixin

    try:
        from vllm.fast import Fast
    except ImportError:
        Fast = None


    class Helper(nn.Module):
        def forward(self, x):
            return x


    class ForCausalLM(nn.Module, Mixin):
        def __init__(self):
            super().__init__()
            self.model = Helper()
{extra}
        def forward(self, x):
            return self.model(x)
"""


def _answer(tmp_path, name: str, extra: str = "", model: str = MODEL) -> bool | None:
    api = _tree(tmp_path, {"vllm/__init__.py": "", "vllm/bases.py": BASES,
                           "vllm/model.py": model.replace("{extra}", extra)})
    text = (tmp_path / "vllm/model.py").read_text()
    line = text.splitlines().index("class ForCausalLM(nn.Module, Mixin):") + 1
    return has_member(api, text, "vllm/model.py", "ForCausalLM", line, name)


def test_a_member_of_a_base_in_another_module(tmp_path):
    assert _answer(tmp_path, "embed_input_ids") is True
    assert _answer(tmp_path, "get_input_embeddings") is False
    assert _answer(tmp_path, "state_dict") is True  # torch.nn.Module's, an external base


def test_no_answer_where_the_module_may_define_it(tmp_path):
    # the name in the module's text (here in the class's own body), a decorator on a method that may set names on
    # the object, a base of the same module (its skeleton has no members), names written through globals()
    extra = "        def get_input_embeddings(self, ids):\n            return ids\n"
    assert _answer(tmp_path, "get_input_embeddings", extra) is None
    assert _answer(tmp_path, "get_input_embeddings", "        @records_calls\n        def step(self):\n            pass\n") is None
    assert _answer(tmp_path, "get_input_embeddings", "        @property\n        def step(self):\n            pass\n") is False
    same_module_base = MODEL.replace("class ForCausalLM(nn.Module, Mixin):", "class ForCausalLM(Helper, Mixin):")
    api = _tree(tmp_path, {"vllm/__init__.py": "", "vllm/bases.py": BASES, "vllm/model.py": same_module_base.replace("{extra}", "")})
    text = (tmp_path / "vllm/model.py").read_text()
    line = text.splitlines().index("class ForCausalLM(Helper, Mixin):") + 1
    assert has_member(api, text, "vllm/model.py", "ForCausalLM", line, "get_input_embeddings") is None
    assert _answer(tmp_path, "get_input_embeddings", model=MODEL + "\n    globals()['X'] = 1\n") is None


def test_skeleton_keeps_the_top_level_and_its_lines():
    text = textwrap.dedent('''
        import os
        if os.name == "nt":
            def f(a):
                return a
        @decorate(
            1,
        )
        class A(
            Base,
        ):
            """A docstring with a line at column 0:
        class Inner(Thing): not code
            """
            x = 1

            def g(self):
                return 2


        def h(a,
              b) -> int:
            return a + b
        Y = h(1, 2)
    ''')
    out = skeleton(text)
    assert out is not None and len(out.splitlines()) == len(text.splitlines())
    kept = [line for line in out.splitlines() if line.strip()]
    assert kept == ["import os", 'if os.name == "nt":', "    def f(a):", "        return a", "@decorate(", "    1,", ")",
                    "class A(", "    Base,", "):", "    pass", "def h(a,", "      b) -> int:", "    pass", "Y = h(1, 2)"]

