"""``madspy bench``: benchmarks of madspy itself (the engine on a scripted model, local llama.cpp models)."""
