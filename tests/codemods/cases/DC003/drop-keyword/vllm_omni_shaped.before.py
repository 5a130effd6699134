# vllm 0.33.0
from vllm.model_executor.models.utils import AutoWeightsLoader


def load_weights(model, weights):
    # vllm-omni 0.12.0rc1's talker: a non-empty list asks for something (skip these weights); 0.33.0 has no
    # `skip_prefixes`, and dropping it would load weights no module takes, so it is left for a person
    loader = AutoWeightsLoader(model, skip_prefixes=["thinker.", "code2wav."])
    # None asks for nothing: dropped
    plain = AutoWeightsLoader(model, skip_substrs=None)
    return loader.load_weights(weights), plain


def load_thinker(model, weights, spec):
    # vllm-omni 0.22.0's thinker: the list is built in a name first (and extended): left, like the literal
    skip_prefixes = ["talker.", "token2wav."]
    skip_prefixes.extend(["visual."])
    loader = AutoWeightsLoader(model, skip_prefixes=skip_prefixes)
    # a name some call filled says nothing either way: dropped, and the summary names the value
    other = AutoWeightsLoader(model, skip_substrs=spec.substrings())
    return loader.load_weights(weights), other


def load_stage(model, weights, stage):
    # a list display whose item some code computes asks for something all the same (the rule's own reading): left
    loader = AutoWeightsLoader(model, skip_prefixes=[stage + "."])
    return loader.load_weights(weights)
