"""Attributes created from outside a class (driftcheck/vllm_model/created_elsewhere.py): the fast searches give the
answers of the plain whole-tree search they replaced, kept here as the reference."""

from __future__ import annotations

import re

import pytest

from scan.helpers import index

FILLER = "\n".join(f"    x{i} = {i}" for i in range(45))

TREE = {
    "vllm/layers/linear.py": """
        class Linear:
            def __init__(self):
                self.weight = None  # self.<name> = : the class's own summary has it, not this search


        def make(layer):
            layer.output_sizes = [1, 2]
            layer.bias_scale: float = 1.0
            if layer.guard == 1:
                pass
    """,
    "vllm/layers/quant.py": """
        def create(layer, extra):
            layer.register_parameter(
                "qweight", None)
            layer.register_buffer('g_idx', None)
            setattr(layer, "input_scale", None)
            for n, t in (("W_K", 1),):
                setattr(layer, n, t)
            replace_parameter(layer, "W_UK_T", None)
            layer.register_parameter(f"w13_{extra}", None)
    """,
    "vllm/utils/params.py": (
        "def replace_parameter(mod, name, value):\n"
        "    setattr(mod, name, value)\n\n\n"
        f"def later_helper(mod, name, value):\n{FILLER}\n"
        "    setattr(mod, name, value)\n\n\n"
        "async def async_helper(mod, name, value):\n"
        "    setattr(mod, name, value)\n"
    ),
    "vllm/layers/mla.py": """
        def process(layer):
            replace_parameter(layer, "W_UV", None)
            later_helper(layer, "far_weight", None)
            async_helper(layer, "async_weight", None)
    """,
    "vllm/other.py": """
        NAMES = ["qweight", "layer_id"]


        def read(layer):
            return layer.layer_id == 3, layer.weight
    """,
}

NAMES = ["output_sizes", "bias_scale", "guard", "weight", "qweight", "g_idx", "input_scale", "W_K", "W_UK_T", "W_UV",
         "far_weight", "async_weight", "w13_scale", "layer_id", "absent"]


def _reference(api, name: str):
    """The search before the fast paths: one regex with no literal start over every file naming `name`, and a
    whole-tree search of each helper a file calls."""
    from driftcheck.vllm_model.bodies import text_index_for
    from driftcheck.vllm_model.created_elsewhere import _COMPUTED_SETATTR, _name_templates

    index = text_index_for(api)
    word = re.escape(name.encode())
    pattern = re.compile(rb"(\w+)\." + word + rb"\s*(?::[^=\n]+)?=(?!=)|(?:register_(?:parameter|buffer|module)|add_module)"
                         rb"\(\s*[\"']" + word + rb"[\"']|setattr(?:__)?\([^,\n]+,\s*[\"']" + word + rb"[\"']")
    literal = re.compile(rb"[\"']" + word + rb"[\"']")

    def sets_named(function: str) -> bool:
        for rel, line, kind in index.top_level_definitions(function):
            body = b"\n".join(index.blob(rel).split(b"\n")[line - 1:line + 40])
            if kind == "def" and _COMPUTED_SETATTR.search(body):
                return True
        return False

    found = None
    for rel in index.files_mentioning(name):
        data = index.blob(rel)
        for m in pattern.finditer(data):
            if m.group(1) == b"self":
                continue
            found = (rel, data.count(b"\n", 0, m.start()) + 1)
            break
        m = literal.search(data) if found is None else None
        if m is not None and (_COMPUTED_SETATTR.search(data) or any(
                sets_named(c.group(1).decode()) for c in re.finditer(rb"(\w+)\(\s*[\w.]+\s*,\s*[A-Za-z_]\w*\s*[,)]", data))):
            found = (rel, data.count(b"\n", 0, m.start()) + 1)
        if found is None:
            for m in re.finditer(rb"(\w+)\(\s*[\w.]+\s*,\s*[\"']" + word + rb"[\"']", data):
                if sets_named(m.group(1).decode()):
                    found = (rel, data.count(b"\n", 0, m.start()) + 1)
                    break
        if found:
            break
    if found is None:
        for rel, line, template in _name_templates(index):
            if re.fullmatch(template, name):
                return (rel, line)
    return found


@pytest.fixture
def api(tmp_path):
    return index(tmp_path, TREE)


def test_the_fast_search_answers_as_the_whole_tree_search(api):
    fast = {name: api.assigned_from_outside(name) for name in NAMES}
    assert fast == {name: _reference(api, name) for name in NAMES}
    assert fast["output_sizes"] == ("vllm/layers/linear.py", 7) and fast["bias_scale"][1] == 8
    assert fast["qweight"] == ("vllm/layers/quant.py", 2)  # the call starts on line 2, its name is on line 3
    assert fast["W_UK_T"] == ("vllm/layers/quant.py", 8)  # a name in a file that sets attributes by computed names
    assert fast["W_UV"] == ("vllm/layers/mla.py", 2)  # given to a helper that sets the attribute it is named
    assert fast["far_weight"] is None and fast["async_weight"] is None and fast["w13_scale"] == ("vllm/layers/quant.py", 9)
    # `==` is no assignment; `self.weight =` is the class's own; a name only read is created by nobody
    assert fast["guard"] is None and fast["weight"] is None and fast["layer_id"] is None and fast["absent"] is None


def test_only_top_level_defs_that_set_by_name_early_count_as_setters(api):
    assert api._sets_named_attribute("replace_parameter")
    assert not api._sets_named_attribute("later_helper")  # its setattr is past the first 40 lines
    assert not api._sets_named_attribute("async_helper")  # an `async def` is not read as a helper
    assert not api._sets_named_attribute("make")
