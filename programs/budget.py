"""A token budget shared by every question of a run.

Each question adds its tokens when it finishes (``debate(question=q, run_budget=budget)``); a
debate stops when the run's budget is spent.

Example:
    >>> from madspy.programs.budget import RunBudget
    >>> budget = RunBudget(100_000)
    >>> budget.add(1_200)
    >>> budget.remaining
    98800
"""

from __future__ import annotations

import threading


class RunBudget:
    """Tokens spent so far against a limit (thread-safe; questions add their total when they finish)."""

    def __init__(self, tokens: int):
        self.tokens, self.spent = tokens, 0
        self._lock = threading.Lock()

    def add(self, tokens: int) -> None:
        with self._lock:
            self.spent += tokens

    @property
    def remaining(self) -> int:
        return self.tokens - self.spent
