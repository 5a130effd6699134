# vllm 0.16.0
import types

from vllm.model_executor.models.llama import LlamaModel


def _forward(self, input_ids, positions, inputs_embeds=None):
    hidden = inputs_embeds if inputs_embeds is not None else self.get_input_embeddings(input_ids)
    return hidden


def patch(model: LlamaModel):
    model.forward = types.MethodType(_forward, model)
