"""A hand port of speculators 0.3.0's generator to vLLM 0.16, applied to a *copy* of the package.

It mirrors what the maintainers did in speculators 0.4.0 (PR #225) for each drift, and nothing more:
in particular it leaves prefix caching at vLLM's default, so that the smoke runner's careful mode
(prefix caching off) and the target's defaults can be told apart. Used by the vllm_runtime tests to
exercise the generator driver's success path independently of `driftcheck fix`.
"""

from __future__ import annotations

import shutil
from pathlib import Path

GENERATOR = {
    # get_request_block_hasher / init_none_hash: Request needs a block hasher (0.12+)
    "from vllm.v1.core.kv_cache_utils import (\n    _get_kv_cache_groups_uniform_spec,\n":
        "from vllm.utils.hashing import get_hash_fn_by_name\n"
        "from vllm.v1.core.kv_cache_utils import (\n    _get_kv_cache_groups_uniform_spec,\n"
        "    get_request_block_hasher,\n    init_none_hash,\n",
    # get_kv_cache_config_from_groups dropped kv_cache_specs (0.12)
    "            kv_cache_specs=kv_cache_spec,\n": "",
    # Scheduler requires block_size (0.11.1)
    "            structured_output_manager=structured_output_manager,\n        )\n":
        "            structured_output_manager=structured_output_manager,\n            block_size=VLLM_BLOCK_SIZE,\n        )\n"
        "        caching_hash_fn = get_hash_fn_by_name(\n"
        "            self.vllm_config.cache_config.prefix_caching_hash_algo\n        )\n"
        "        init_none_hash(caching_hash_fn)\n"
        "        self.block_hasher = get_request_block_hasher(\n"
        "            self.vllm_config.cache_config.block_size, caching_hash_fn\n        )\n",
    # SchedulerConfig requires is_encoder_decoder (0.12)
    "                max_num_batched_tokens=max_num_batched_tokens,\n            ),":
        "                max_num_batched_tokens=max_num_batched_tokens,\n                is_encoder_decoder=False,\n            ),",
    "                arrival_time=INITIAL_ARRIVAL_TIME,\n            )":
        "                arrival_time=INITIAL_ARRIVAL_TIME,\n                block_hasher=self.block_hasher,\n            )",
    # execute_model returns None until sample_tokens() (0.11.1)
    "            self.executor.execute_model(scheduler_output)\n":
        "            model_output = self.executor.execute_model(scheduler_output)\n"
        "            self.executor.sample_tokens(model_output)\n",
    # collective_rpc(..., unique_reply_rank=0) returns the reply itself, not a list
    "        aux_hidden_states = captured_states_list[0]": "        aux_hidden_states = captured_states_list",
}
WORKER = {
    # get_input_embeddings -> embed_input_ids (0.11.1)
    "self.get_input_embeddings(input_ids)": "self.embed_input_ids(input_ids)",
}


def _apply(path: Path, edits: dict[str, str]) -> None:
    text = path.read_text()
    for old, new in edits.items():
        if text.count(old) != 1:
            raise ValueError(f"{path.name}: expected one occurrence of {old[:60]!r}")
        text = text.replace(old, new)
    path.write_text(text)


def patched_copy(package_dir: Path, dest: Path) -> Path:
    """Copy the speculators package into dest/speculators and port its generator; returns dest."""
    target = dest / "speculators"
    shutil.copytree(package_dir, target, ignore=shutil.ignore_patterns("__pycache__"))
    _apply(target / "data_generation" / "vllm_hidden_states_generator.py", GENERATOR)
    _apply(target / "data_generation" / "custom_worker.py", WORKER)
    return dest
