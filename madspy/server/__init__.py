"""``madspy serve``: debate programs over HTTP (madspy's own API and OpenAI's chat completions), with a transcript store."""
