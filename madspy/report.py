"""Self-contained HTML reports: inline CSS and SVG drawn here, no script, no network.

``write_eval_report`` turns an eval folder into ``report.html``: the summary table,
a reliability diagram per program, accuracy against tokens, an optional paired
comparison, and the questions the programs disagree on, linked to both transcripts
(rendered next to their JSON). ``write_transcript_report`` renders one debate.

Example::

    from madspy.report import write_eval_report, write_transcript_report
    write_eval_report("runs/gsm8k")                # -> runs/gsm8k/report.html
    write_transcript_report("debate.json")         # -> debate.html
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from html import escape
from pathlib import Path
from typing import Any

import pandas as pd
from rich.text import Text

from madspy.comparison import Comparison
from madspy.evaluation import load_rows
from madspy.optimizers import metrics
from madspy.programs.transcript import Transcript
from madspy.render import call_summary
from madspy.rows import EvalRow
from madspy.summary import summarize

MAX_DISAGREEMENTS = 200
SIZE, PAD = 240, 36  # plot area side and margin, in SVG units
CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:2rem auto;max-width:1100px;color:#222;padding:0 1rem}
h1{font-size:1.5rem} h2{font-size:1.15rem;margin-top:2rem;border-bottom:1px solid #ddd}
table{border-collapse:collapse;margin:.5rem 0;font-size:13px} th,td{border:1px solid #ddd;padding:3px 7px;
vertical-align:top} th{background:#f4f4f4} td.num{text-align:right;font-variant-numeric:tabular-nums}
.plots{display:flex;flex-wrap:wrap;gap:1rem} figure{margin:0} figcaption{font-size:12px;text-align:center}
svg text{font-size:10px;fill:#444} .axis{stroke:#888} .diagonal{stroke:#bbb;stroke-dasharray:4 3}
.bin{fill:#7aa6d8;opacity:.75} .curve{fill:none;stroke:#1f4e8c;stroke-width:1.5} .point{fill:#c0392b}
.whisker{stroke:#c0392b} .right{color:#1a7f37} .wrong{color:#b42318} .verdict{font-weight:600}
.event{color:#8a5a00} .meta{color:#666;font-size:12px}
"""


def _slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "program"


def _num(value: Any, digits: int = 3) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return f"{value:.{digits}f}" if isinstance(value, float) else str(value)


def _page(title: str, body: str) -> str:
    return (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{escape(title)}</title>'
        f"<style>{CSS}</style></head><body><h1>{escape(title)}</h1>\n{body}\n</body></html>\n"
    )


def _frame(x_label: str, y_label: str, x_ticks: Sequence[tuple[float, str]]) -> str:
    """Axes of a SIZE x SIZE plot area at (PAD, PAD), y from 0 to 1."""
    bottom, right = PAD + SIZE, PAD + SIZE
    parts = [
        f'<line class="axis" x1="{PAD}" y1="{bottom}" x2="{right}" y2="{bottom}"/>',
        f'<line class="axis" x1="{PAD}" y1="{PAD}" x2="{PAD}" y2="{bottom}"/>',
    ]
    for value in (0.0, 0.5, 1.0):
        y = bottom - value * SIZE
        parts.append(f'<text x="{PAD - 4}" y="{y + 3:.1f}" text-anchor="end">{value:g}</text>')
    for x, label in x_ticks:
        parts.append(f'<text x="{x:.1f}" y="{bottom + 12}" text-anchor="middle">{escape(label)}</text>')
    parts.append(f'<text x="{PAD + SIZE / 2}" y="{bottom + 26}" text-anchor="middle">{escape(x_label)}</text>')
    parts.append(
        f'<text transform="rotate(-90)" x="{-(PAD + SIZE / 2)}" y="10" text-anchor="middle">{escape(y_label)}</text>'
    )
    return "".join(parts)


def reliability_svg(name: str, confidences: Sequence[float], correct: Sequence[bool], bins: int = 10) -> str:
    """A reliability diagram: accuracy per confidence bin (bars, line) against the diagonal."""
    bottom = PAD + SIZE
    ticks = [(PAD + v * SIZE, f"{v:g}") for v in (0.0, 0.5, 1.0)]
    parts = [
        _frame("confidence", "accuracy", ticks),
        f'<line class="diagonal" x1="{PAD}" y1="{bottom}" x2="{PAD + SIZE}" y2="{PAD}"/>',
    ]
    points = []
    for b in metrics.reliability_curve(confidences, correct, bins):
        if not b.count:
            continue
        x, width, height = PAD + b.lower * SIZE, SIZE / bins, b.accuracy * SIZE
        parts.append(
            f'<rect class="bin" x="{x:.1f}" y="{bottom - height:.1f}" width="{width - 1:.1f}" '
            f'height="{height:.1f}"><title>{b.count} answers, confidence {b.mean_confidence:.2f}, '
            f"accuracy {b.accuracy:.2f}</title></rect>"
        )
        points.append(f"{PAD + b.mean_confidence * SIZE:.1f},{bottom - height:.1f}")
    if points:
        parts.append(f'<polyline class="curve" points="{" ".join(points)}"/>')
    return _svg(f"reliability-{_slug(name)}", "reliability", parts)


def _svg(svg_id: str, cls: str, parts: list[str]) -> str:
    side = SIZE + 2 * PAD
    return (
        f'<svg id="{svg_id}" class="plot {cls}" xmlns="http://www.w3.org/2000/svg" width="{side}" '
        f'height="{side}" viewBox="0 0 {side} {side}">{"".join(parts)}</svg>'
    )


def accuracy_tokens_svg(summary: pd.DataFrame) -> str:
    """Accuracy (with its 95% interval) against mean tokens per question, one point per program."""
    top = max(float(summary["tokens"].max()), 1.0) * 1.1
    bottom = PAD + SIZE
    ticks = [(PAD + f * SIZE, f"{f * top:.0f}") for f in (0.0, 0.5, 1.0)]
    parts = [_frame("tokens per question", "accuracy", ticks)]
    for name, line in summary.iterrows():
        x = PAD + float(line["tokens"]) / top * SIZE
        y, low, high = (bottom - float(line[k]) * SIZE for k in ("accuracy", "ci_low", "ci_high"))
        parts.append(
            f'<line class="whisker" x1="{x:.1f}" y1="{low:.1f}" x2="{x:.1f}" y2="{high:.1f}"/>'
            f'<circle class="point" data-program="{escape(str(name))}" cx="{x:.1f}" cy="{y:.1f}" r="4">'
            f"<title>{escape(str(name))}: accuracy {line['accuracy']:.3f}, "
            f"{line['tokens']:.0f} tokens</title></circle>"
            f'<text x="{x + 6:.1f}" y="{y - 6:.1f}">{escape(str(name))}</text>'
        )
    return _svg("accuracy-tokens", "scatter", parts)


SUMMARY_COLUMNS = (
    "n",
    "accuracy",
    "ci_low",
    "ci_high",
    "ece",
    "brier",
    "critic_hit_rate",
    "critic_false_alarm",
    "tokens",
    "calls",
    "wall_s",
    "statuses",
)


def summary_table(summary: pd.DataFrame) -> str:
    """The per-program summary as an HTML table (id ``summary``)."""
    head = "".join(f"<th>{c}</th>" for c in ("program", *SUMMARY_COLUMNS))
    body = "".join(
        f"<tr><th>{escape(str(name))}</th>"
        + "".join(f'<td class="num">{escape(_num(line[c], 0 if c == "tokens" else 3))}</td>' for c in SUMMARY_COLUMNS)
        + "</tr>"
        for name, line in summary.iterrows()
    )
    return f'<table id="summary"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def comparison_section(c: Comparison) -> str:
    """The paired test of two programs and its verdict (id ``comparison``)."""
    d, m = c.difference, c.mcnemar
    rows = [
        ("paired questions", c.n),
        (f"accuracy {c.a}", f"{c.accuracy_a:.3f}"),
        (f"accuracy {c.b}", f"{c.accuracy_b:.3f}"),
        ("difference a - b (95% CI)", f"{d.mean_difference:+.3f} [{d.low:+.3f}, {d.high:+.3f}]"),
        ("McNemar", f"{c.a} only right {m.a_only}, {c.b} only right {m.b_only}, p = {m.p_value:.4g}"),
        ("tokens per question", f"{c.tokens_a:.0f} vs {c.tokens_b:.0f}"),
        ("seconds per question", f"{c.wall_s_a:.2f} vs {c.wall_s_b:.2f}"),
    ]
    cells = "".join(f"<tr><th>{escape(k)}</th><td>{escape(str(v))}</td></tr>" for k, v in rows)
    return (
        f'<h2>Paired comparison</h2><p class="verdict" id="verdict">{escape(c.verdict)}</p>'
        f'<table id="comparison">{cells}</table>'
    )


def _link(row: EvalRow) -> str:
    if not row.transcript:
        return ""
    json_path = Path(row.transcript)
    return (
        f' <a href="{escape(json_path.with_suffix(".html").as_posix())}">transcript</a>'
        f' <a href="{escape(json_path.as_posix())}">json</a>'
    )


def disagreements_table(rows: Sequence[EvalRow], programs: Sequence[str]) -> tuple[str, list[EvalRow]]:
    """Questions whose correctness differs between programs (id ``disagreements``) and the rows it links."""
    by_id: dict[str, dict[str, EvalRow]] = {}
    for r in rows:
        if r.program in programs:
            by_id.setdefault(str(r.id), {})[r.program] = r
    split = [
        (i, found)
        for i, found in by_id.items()
        if len(found) == len(programs) and len({bool(r.correct) for r in found.values()}) > 1
    ]
    linked: list[EvalRow] = []
    lines = []
    for qid, found in split[:MAX_DISAGREEMENTS]:
        cells = []
        for name in programs:
            r = found[name]
            mark = ("right", "&#10003;") if r.correct else ("wrong", "&#10007;")
            cells.append(f'<td><span class="{mark[0]}">{mark[1]}</span> {escape(str(r.answer))}{_link(r)}</td>')
            linked.append(r)
        gold = escape(next(iter(found.values())).gold)
        lines.append(f"<tr><th>{escape(qid)}</th><td>{gold}</td>{''.join(cells)}</tr>")
    head = "".join(f"<th>{escape(p)}</th>" for p in programs)
    shown = f"showing {MAX_DISAGREEMENTS} of {len(split)}"
    more = f'<p class="meta">{shown}</p>' if len(split) > MAX_DISAGREEMENTS else ""
    table = (
        f'<h2>Disagreements ({len(split)} questions)</h2>{more}<table id="disagreements"><thead><tr>'
        f"<th>id</th><th>gold</th>{head}</tr></thead><tbody>{''.join(lines)}</tbody></table>"
    )
    return table, linked


def eval_page(
    rows: Sequence[EvalRow], title: str, programs: Sequence[str] | None = None, comparison: Comparison | None = None
) -> tuple[str, list[EvalRow]]:
    """The HTML of an eval report and the rows whose transcripts it links to."""
    programs = list(programs or dict.fromkeys(r.program for r in rows))
    summary = summarize([r for r in rows if r.program in programs], order=programs)
    plots = ""
    for name in programs:
        mine = [r for r in rows if r.program == name]
        svg = reliability_svg(name, [r.confidence for r in mine], [bool(r.correct) for r in mine])
        plots += f"<figure>{svg}<figcaption>reliability: {escape(name)}</figcaption></figure>"
    plots += f"<figure>{accuracy_tokens_svg(summary)}<figcaption>accuracy vs tokens</figcaption></figure>"
    table, linked = disagreements_table(rows, programs)
    body = (
        f"<h2>Summary</h2>{summary_table(summary)}"
        + (comparison_section(comparison) if comparison else "")
        + f'<h2>Calibration and cost</h2><div class="plots">{plots}</div>{table}'
    )
    return _page(title, body), linked


def transcript_page(t: Transcript, title: str = "debate") -> str:
    """One debate as HTML: every round's calls, votes, flips and events, then the decision."""
    parts = [f"<p><b>question</b></p><pre>{escape(t.question)}</pre>"]
    for rnd in t.rounds:
        calls = "".join(
            f"<tr><td>{c.role}</td><td>{'' if c.agent is None else c.agent}</td>"
            f"<td>{escape(Text.from_markup(call_summary(c)).plain)}</td>"
            f'<td class="num">{c.prompt_tokens}/{c.completion_tokens}</td><td class="num">{c.latency_s:.2f}</td></tr>'
            for c in rnd.calls
        )
        parts.append(
            f'<h2>Round {rnd.index} <span class="meta">({rnd.wall_s:.2f}s)</span></h2>'
            f'<table class="round"><thead><tr><th>role</th><th>agent</th><th>output</th><th>in/out tok</th>'
            f"<th>s</th></tr></thead><tbody>{calls}</tbody></table>"
        )
        if rnd.votes:
            parts.append("<p>votes: " + escape(", ".join(f"agent {a}: {v}" for a, v in rnd.votes.items())) + "</p>")
        parts += [
            f'<p class="event">flip: agent {f.agent} {escape(f.before)} &rarr; {escape(f.after)} ({f.kind})</p>'
            for f in rnd.flips
        ]
        parts += [f'<p class="event">{escape(str(e))}</p>' for e in rnd.events]
    d, u = t.decision, t.usage
    parts.append(
        f'<h2>Result</h2><table id="result"><tr><th>answer</th><td>{escape(str(d.answer if d else None))}</td></tr>'
        f"<tr><th>confidence</th><td>{d.confidence if d else 0:.2f}</td></tr>"
        f"<tr><th>status</th><td>{escape(t.status)} ({escape(t.stop_reason)})</td></tr>"
        f"<tr><th>protocol</th><td>{escape(d.protocol if d else '-')} {escape(d.note if d else '')}</td></tr>"
        f"<tr><th>tally</th><td>{escape(str(d.tally if d else {}))}</td></tr>"
        f"<tr><th>tokens</th><td>{u.prompt_tokens} + {u.completion_tokens} in {u.calls} calls "
        f"({u.failed_calls} failed), {t.wall_s:.2f}s</td></tr></table>"
    )
    return _page(title, "".join(parts))


def write_transcript_report(path: str | Path, out: str | Path | None = None) -> Path:
    """Render the transcript JSON at ``path`` to ``out`` (default: the same name with ``.html``)."""
    path = Path(path)
    out = Path(out) if out else path.with_suffix(".html")
    out.write_text(transcript_page(Transcript.load(path), title=path.stem), encoding="utf-8")
    return out


def write_eval_report(
    eval_dir: str | Path,
    programs: Sequence[str] | None = None,
    comparison: Comparison | None = None,
    title: str | None = None,
) -> Path:
    """Write ``<eval_dir>/report.html`` and an HTML page beside each transcript it links to."""
    eval_dir = Path(eval_dir)
    html, linked = eval_page(load_rows(eval_dir), title or f"madspy eval: {eval_dir.name}", programs, comparison)
    for r in linked:
        if r.transcript and (eval_dir / r.transcript).is_file():
            write_transcript_report(eval_dir / r.transcript)
    out = eval_dir / "report.html"
    out.write_text(html, encoding="utf-8")
    return out
