"""Reusable scripts for the scripted LiteLLM provider."""

from __future__ import annotations

from typing import Any

from madspy.testing import Turn

# The default debate with its critic on and a unanimity gate: a 2-of-3 first round is reviewed and revised.
REVIEWED = {"critic": {"enabled": True}, "stop": {"decisive_share": 1.0}}


def proposal(answer: str, confidence: float = 0.7, evidence: str = "none") -> dict[str, Any]:
    return {
        "reasoning": f"so the answer is {answer}",
        "answer": answer,
        "confidence": confidence,
        "evidence_ref": evidence,
    }


def critique(flawed: bool) -> dict[str, Any]:
    issues = (
        [
            {
                "location": "step 1",
                "issue_type": "calculation_error",
                "description": "the product is wrong",
                "evidence": "17*23=391",
            }
        ]
        if flawed
        else []
    )
    return {"reasoning": "checked each step", "issues": issues, "verdict": "flawed" if flawed else "sound"}


def resolution(answer: str, confidence: float = 0.8, status: str = "converged") -> dict[str, Any]:
    return {"final_answer": answer, "confidence": confidence, "verification": "checked step 1", "status": status}


def agent_of(turn: Turn, personas: list[str]) -> int:
    """Which agent asked, recognised by its persona."""
    return personas.index(turn.inputs["persona"])


def by_agent(personas: list[str], answers: list[list[str]], confidence: float = 0.7, judge: str | None = None):
    """A script where agent i answers answers[i][round] (its last entry once rounds run out)."""
    seen: dict[int, int] = {}

    def script(turn: Turn):
        if turn.role in ("proposer", "reviser"):
            i = agent_of(turn, personas)
            r = seen.get(i, 0)
            seen[i] = r + 1
            mine = answers[i]
            return proposal(mine[min(r, len(mine) - 1)], confidence, "critique 1" if r else "none")
        if turn.role == "critic":
            return critique(flawed=True)
        if turn.role == "resolver":
            return resolution(judge or "391")
        return "unexpected role"

    return script
