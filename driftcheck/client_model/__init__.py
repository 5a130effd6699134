"""The client model: which client files use vLLM, what they use and under which guards."""
