# vllm 0.32.0
from vllm.sampling_params import SamplingParams
from vllm.v1.request import Request


def make_request(request_id: str, prompt_token_ids: list[int]) -> Request:
    return Request(
        request_id=request_id,
        prompt_token_ids=prompt_token_ids,
        sampling_params=SamplingParams(max_tokens=1),
        pooling_params=None,  # no pooling here: the comment on the line before a dropped last keyword stays (21a)
        eos_token_id=None,  # the tokenizer's EOS is in sampling_params
    )
