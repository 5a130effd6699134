# vllm 0.16.0
# no drift for this rule here: the fix must leave this file byte for byte as it is
from vllm.utils.network_utils import get_open_port

PORT = get_open_port()
