"""``madspy serve``: debate programs over HTTP (madspy's own API and OpenAI's), with a transcript store."""
