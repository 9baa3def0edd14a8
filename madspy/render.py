"""Render a ``Transcript`` on a terminal with rich.

Example:
    >>> from rich.console import Console
    >>> from madspy.render import render_transcript
    >>> from madspy.programs.transcript import Transcript
    >>> render_transcript(Transcript(question="2+2?"), Console(width=80))  # doctest: +SKIP
"""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.panel import Panel
from rich.table import Table

from madspy.programs.steps import proposal_steps
from madspy.programs.transcript import Call, Transcript


def call_summary(call: Call) -> str:
    """One cell saying what a call produced (model text escaped: it may hold [brackets])."""
    if call.error:
        return f"[red]failed[/red] {escape(call.error[:160])}"
    out: dict[str, Any] = call.output or {}
    if "final_answer" in out:
        return (
            f"[bold]{escape(str(out['final_answer']))}[/bold] ({out.get('confidence', 0):.2f}, "
            f"{out.get('status')}) {escape(str(out.get('verification', '')))}"
        )
    if "verdict" in out:
        issues = out.get("issues") or []
        found = "; ".join(f"{i.get('location')}: {i.get('issue_type')} - {i.get('description')}" for i in issues)
        return escape(f"{out['verdict']}" + (f": {found}" if found else ""))
    if "answer" in out:
        steps = escape(" | ".join(proposal_steps(out)))
        ref = out.get("evidence_ref")
        flip = f" [dim](evidence: {escape(str(ref))})[/dim]" if ref not in (None, "", "none") else ""
        return f"[bold]{escape(str(out['answer']))}[/bold] ({out.get('confidence', 0):.2f}) {steps}{flip}"
    return escape(", ".join(f"{k}={v}" for k, v in out.items()))


def render_transcript(t: Transcript, console: Console | None = None) -> None:
    """Print every round's calls, votes and events, then the decision and its cost."""
    console = console or Console()
    console.print(Panel(t.question, title="question", expand=False))
    for rnd in t.rounds:
        table = Table(title=f"round {rnd.index}  ({rnd.wall_s:.2f}s)", show_lines=True, expand=True)
        for name, kw in (
            ("role", {}),
            ("agent", {"justify": "right"}),
            ("output", {"ratio": 1}),
            ("in/out tok", {"justify": "right"}),
            ("s", {"justify": "right"}),
        ):
            table.add_column(name, **kw)
        for c in rnd.calls:
            table.add_row(
                c.role,
                "" if c.agent is None else str(c.agent),
                call_summary(c),
                f"{c.prompt_tokens}/{c.completion_tokens}",
                f"{c.latency_s:.2f}",
            )
        console.print(table)
        if rnd.masks:
            console.print(
                "memory mask: "
                + ", ".join(f"agent {m.agent} {m.label} ({'kept' if m.kept else 'dropped'})" for m in rnd.masks)
            )
        if rnd.votes:
            console.print("votes: " + ", ".join(f"agent {a}: {v}" for a, v in rnd.votes.items()))
        for f in rnd.flips:
            console.print(escape(f"flip: agent {f.agent} {f.before} -> {f.after} [{f.kind}] {f.evidence_ref}"))
        if rnd.echo_ratio is not None:
            console.print(f"echo ratio: {rnd.echo_ratio:.2f}")
        if rnd.referee:
            r = rnd.referee
            console.print(
                f"referee: relevance {float(r.get('relevance') or 0):.2f}, converged {r.get('converged')}"
                + (f", agreement {float(r['agreement']):.2f}" if r.get("agreement") is not None else "")
                + (f", intervention: {r['intervention']}" if r.get("intervention") else "")
            )
        for event in rnd.events:
            console.print(f"[yellow]- {escape(str(event))}[/yellow]")
    d, u = t.decision, t.usage
    lines = [
        f"answer: [bold]{d.answer if d else None}[/bold]   confidence: {d.confidence if d else 0:.2f}",
        f"status: {t.status}   stop reason: {t.stop_reason}   protocol: {d.protocol if d else '-'}"
        + (f" ({d.note})" if d and d.note else ""),
        f"tally: {d.tally if d else {}}" + (f"   scores: {d.candidates}" if d and d.candidates else ""),
        f"tokens: {u.prompt_tokens} prompt ({u.cached_prompt_tokens} cached) + {u.completion_tokens} completion"
        f" in {u.calls} calls"
        f" ({u.failed_calls} failed)   wall time: {t.wall_s:.2f}s",
    ]
    console.print(Panel("\n".join(lines), title="result", expand=False))
