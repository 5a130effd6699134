# vllm 0.16.0
import os


def _port():
    # imported lazily: the connector module must import without vLLM
    from vllm.utils.network_utils import get_open_port
    return int(os.environ.get("HS_PORT") or get_open_port())
