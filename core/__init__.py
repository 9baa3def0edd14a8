"""The foundation every layer stands on: the error tree and the model backends (LiteLLM, in-process llama.cpp)."""
