"""madspy: multi-agent debate as one DSPy program."""
