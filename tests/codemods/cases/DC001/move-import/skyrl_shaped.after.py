# vllm 0.33.0
# skyrl-train 0.3.1 (skyrl_train/inference_engines/vllm/vllm_engine.py:18): vllm.entrypoints.openai.protocol was
# split. Each name goes to the module that has it, and each new import keeps the statement's layout (one name a
# line, a trailing comma, `)` on its own line).
from vllm.entrypoints.openai.chat_completion.protocol import (
    ChatCompletionRequest,
    ChatCompletionResponse,
)
from vllm.entrypoints.openai.completion.protocol import (
    CompletionRequest,
    CompletionResponse,
)
from vllm.entrypoints.serve.engine.protocol import (
    ErrorResponse,
)

HANDLED = (ChatCompletionRequest, ChatCompletionResponse, ErrorResponse, CompletionRequest, CompletionResponse)
