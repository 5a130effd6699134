# vllm 0.16.0
from vllm.utils.network_utils import get_open_port

PORT = get_open_port()
