# vllm 0.6.3.post1
# megrez (vllm_demo/try_minicpm_v.py:53): SamplingParams lost use_beam_search= in 0.6.3. `use_beam_search=True` asks
# for beam search: dropping it would run greedy sampling without a word, so it is left; `False` asked for nothing.
from vllm import SamplingParams

plain = SamplingParams(temperature=0, max_tokens=1024)
beam = SamplingParams(stop_token_ids=[2], use_beam_search=True, temperature=0, best_of=3, max_tokens=1024)
