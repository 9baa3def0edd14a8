"""Render a ``Transcript`` on a terminal with rich.

Example:
    >>> from rich.console import Console
    >>> from madspy.programs.render import render_transcript
    >>> from madspy.programs.transcript import Transcript
    >>> render_transcript(Transcript(question="2+2?"), Console(width=80))  # doctest: +SKIP
"""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.panel import Panel
from rich.table import Table

from madspy.programs.transcript import Call, Transcript


def _summary(call: Call) -> str:
    """One cell saying what a call produced."""
    if call.error:
        return f"[red]failed[/red] {call.error[:160]}"
    out: dict[str, Any] = call.output or {}
    if "final_answer" in out:
        return f"[bold]{out['final_answer']}[/bold] ({out.get('confidence', 0):.2f}, {out.get('status')}) {out.get('verification', '')}"
    if "verdict" in out:
        issues = out.get("issues") or []
        found = "; ".join(f"{i.get('location')}: {i.get('issue_type')} - {i.get('description')}" for i in issues)
        return f"{out['verdict']}" + (f": {found}" if found else "")
    if "answer" in out:
        steps = " | ".join(map(str, out.get("reasoning_steps") or []))
        flip = f" [dim](evidence: {out['evidence_ref']})[/dim]" if out.get("evidence_ref") not in (None, "", "none") else ""
        return f"[bold]{out['answer']}[/bold] ({out.get('confidence', 0):.2f}) {steps}{flip}"
    return ", ".join(f"{k}={v}" for k, v in out.items())


def render_transcript(t: Transcript, console: Console | None = None) -> None:
    """Print every round's calls, votes and events, then the decision and its cost."""
    console = console or Console()
    console.print(Panel(t.question, title="question", expand=False))
    for rnd in t.rounds:
        table = Table(title=f"round {rnd.index}  ({rnd.wall_s:.2f}s)", show_lines=True, expand=True)
        for name, kw in (("role", {}), ("agent", {"justify": "right"}), ("output", {"ratio": 1}),
                         ("in/out tok", {"justify": "right"}), ("s", {"justify": "right"})):
            table.add_column(name, **kw)
        for c in rnd.calls:
            table.add_row(c.role, "" if c.agent is None else str(c.agent), _summary(c),
                          f"{c.prompt_tokens}/{c.completion_tokens}", f"{c.latency_s:.2f}")
        console.print(table)
        if rnd.votes:
            console.print("votes: " + ", ".join(f"agent {a}: {v}" for a, v in rnd.votes.items()))
        for event in rnd.events:
            console.print(f"[yellow]- {event}[/yellow]")
    d, u = t.decision, t.usage
    lines = [
        f"answer: [bold]{d.answer if d else None}[/bold]   confidence: {d.confidence if d else 0:.2f}",
        f"status: {t.status}   stop reason: {t.stop_reason}   protocol: {d.protocol if d else '-'}"
        + (f" ({d.note})" if d and d.note else ""),
        f"tally: {d.tally if d else {}}",
        f"tokens: {u.prompt_tokens} prompt + {u.completion_tokens} completion in {u.calls} calls"
        f" ({u.failed_calls} failed)   wall time: {t.wall_s:.2f}s",
    ]
    console.print(Panel("\n".join(lines), title="result", expand=False))
