"""Progress of long runs (``eval``, ``search``, ``role-eval``): rich bars on a terminal, plain lines elsewhere.

Rich draws no bar until the end when stderr is not a terminal (``nohup``, a CI log), so a run there would show
nothing for hours; it gets one line per finished step instead.

Example::

    with progress_display(True) as (bars, say):
        bar = bars.add_task("questions", total=2)
        for question in ("q1", "q2"):
            bars.advance(bar)
            say(f"{question} done")   # printed only when stderr is not a terminal
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import Progress


@contextmanager
def progress_display(enabled: bool) -> Iterator[tuple[Progress, Callable[[str], None]]]:
    """Rich progress bars (shown on a terminal) and ``say``, which prints a line to stderr when it is not one."""
    console = Console(stderr=True)
    plain = enabled and not console.is_terminal

    def say(line: str) -> None:
        if plain:
            print(line, file=sys.stderr, flush=True)

    with Progress(console=console, disable=not enabled or plain) as bars:
        yield bars, say
