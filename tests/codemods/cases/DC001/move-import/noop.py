# vllm 0.33.0
# no drift for this rule here: the fix must leave this file byte for byte as it is
from vllm.entrypoints.openai.chat_completion.protocol import (
    ChatCompletionRequest,
    ChatCompletionResponse,
)
from vllm.utils.argparse_utils import FlexibleArgumentParser

try:
    from vllm.entrypoints.openai.protocol import ErrorResponse
except ImportError:
    from vllm.entrypoints.serve.engine.protocol import ErrorResponse
