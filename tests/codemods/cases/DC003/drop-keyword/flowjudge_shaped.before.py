# vllm 0.33.0
# flow-judge 0.1.2 (flow_judge/models/vllm.py:241): LLM.generate() lost prompt_token_ids= and now requires `prompts`:
# the rejected keyword carries the call's input, so that call is left alone; SamplingParams' gone keyword is dropped.
from vllm import LLM, SamplingParams


def judge(model: LLM, prompt_token_ids, params, use_tqdm):
    outputs = model.generate(
        prompt_token_ids=prompt_token_ids, sampling_params=params, use_tqdm=use_tqdm
    )
    return [o.outputs[0].text for o in outputs]


def params(temperature):
    return SamplingParams(temperature=temperature, use_beam_search=None)
