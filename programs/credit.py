"""A per-agent credit ledger, updated from verified outcomes, persisted as JSON.

Each verified question moves an agent's credit: ``credit = min(cap, decay * credit
+ (1 if its final answer was right else 0))``, starting at 1.0. The
``credit`` protocol weighs votes by it, so agents that have been right more often
count more. The file survives across questions and runs.

Example:
    >>> import tempfile, os
    >>> ledger = CreditLedger(os.path.join(tempfile.mkdtemp(), "credit.json"))
    >>> ledger.record({0: True, 1: False})
    >>> ledger.weights()
    {0: 1.95, 1: 0.95}
"""

from __future__ import annotations

import json
import os
import tempfile
import threading
from collections.abc import Callable, Mapping
from pathlib import Path

import sqlalchemy as sa

from madspy.core.database import CREDIT_LOCK, hold_in_transaction, is_database_url, shared_database
from madspy.core.errors import InputError
from madspy.programs.transcript import Transcript

_LOCK = threading.Lock()


_TABLE = sa.table("credit_ledger", sa.column("agent", sa.Integer), sa.column("credit", sa.Float))


class CreditLedger:
    """Credit per agent index, stored in the JSON file ``path`` (created on first record), or in the
    database a URL names (``postgresql://...``), which several workers and replicas share."""

    def __init__(self, path: str | Path, decay: float = 0.95, cap: float = 10.0, floor: float = 0.05):
        self.url = str(path) if is_database_url(path) else None
        self.path, self.decay, self.cap, self.floor = Path(path), decay, cap, floor

    def _read(self, conn: sa.Connection | None = None) -> dict[int, float]:
        if self.url is not None:
            if conn is None:
                with shared_database(self.url).connect() as conn:
                    return self._read(conn)
            return {agent: credit for agent, credit in conn.execute(sa.select(_TABLE.c.agent, _TABLE.c.credit))}
        if not self.path.exists():
            return {}
        try:
            return {int(k): float(v) for k, v in json.loads(self.path.read_text(encoding="utf-8")).items()}
        except (ValueError, AttributeError) as e:
            raise InputError(f"credit ledger {self.path} is not a JSON object of agent -> credit ({e})") from None

    def weights(self) -> dict[int, float]:
        """Each agent's vote weight (never below ``floor``)."""
        return {agent: round(max(self.floor, c), 6) for agent, c in self._read().items()}

    def _updated(self, credit: dict[int, float], correct: Mapping[int, bool]) -> dict[int, float]:
        return credit | {
            agent: min(self.cap, self.decay * credit.get(agent, 1.0) + (1.0 if right else 0.0))
            for agent, right in correct.items()
        }

    def record(self, correct: Mapping[int, bool]) -> None:
        """Update credit from one verified question: agent -> whether its final answer was right."""
        if self.url is not None:
            self._record_in_database(correct)
            return
        with _LOCK:
            credit = self._updated(self._read(), correct)
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.path.parent, suffix=".tmp")
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump({str(a): round(c, 6) for a, c in sorted(credit.items())}, f)
            os.replace(tmp, self.path)

    def _record_in_database(self, correct: Mapping[int, bool]) -> None:
        """One transaction that holds the ledger's lock (an advisory lock on PostgreSQL, the write lock on
        SQLite), so two workers recording at once do not lose an update."""
        with shared_database(self.url).begin() as conn:
            hold_in_transaction(conn, CREDIT_LOCK)
            credit = self._updated(self._read(conn), correct)
            conn.execute(_TABLE.delete().where(_TABLE.c.agent.in_(list(correct))))
            conn.execute(_TABLE.insert(), [{"agent": int(a), "credit": round(credit[a], 6)} for a in correct])

    def record_transcript(self, transcript: Transcript, is_correct: Callable[[str], bool]) -> None:
        """Update credit from a finished debate's last votes, checked by ``is_correct``."""
        last = next((r.votes for r in reversed(transcript.rounds) if r.votes), {})
        self.record({int(agent): is_correct(answer) for agent, answer in last.items()})
