"""Generate the worked example's data: weekday arithmetic, a domain no built-in task covers.

Each question asks which weekday falls a number of days before or after a given date, with four options;
the answer is the option's letter. Field names are the example's own (``problem``, ``options``, ``label``,
``uid``, ``split``), so the walkthrough shows how a user maps them. Generated, so the data carries no
license but the project's.

Usage (from the repo root; writes examples/weekdays/weekdays.jsonl, the same file on every run):
    python examples/weekdays/make_data.py
"""

from __future__ import annotations

import datetime
import json
import random
from pathlib import Path

WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
TRAIN, TEST = 200, 100


def question(rng: random.Random, uid: int, split: str) -> dict:
    start = datetime.date(2020, 1, 1) + datetime.timedelta(days=rng.randrange(3650))
    days = rng.randint(3, 400)
    after = rng.random() < 0.6
    target = start + datetime.timedelta(days=days if after else -days)
    right = WEEKDAYS[target.weekday()]
    options = [*rng.sample([d for d in WEEKDAYS if d != right], 3), right]
    rng.shuffle(options)
    when = "after" if after else "before"
    return {
        "uid": f"wd-{uid:03d}",
        "problem": f"{start:%B} {start.day}, {start.year} was a {start:%A}. "
        f"Which day of the week was it {days} days {when} that date?",
        "options": options,
        "label": "ABCD"[options.index(right)],
        "split": split,
    }


def main() -> None:
    rng = random.Random(2026)
    rows = [question(rng, i, "train" if i < TRAIN else "test") for i in range(TRAIN + TEST)]
    out = Path(__file__).with_name("weekdays.jsonl")
    out.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    print(f"wrote {len(rows)} questions to {out}")


if __name__ == "__main__":
    main()
