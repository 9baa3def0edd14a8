"""A user's rows as read: from a JSONL, CSV or Parquet file, or from a table in memory, each row with its place.

A place says where a row came from, so that an error names what to fix: the file and 1-based line
of a JSONL or CSV row, the file and 1-based row of a Parquet row, or the kind of table and row.
Reading checks only the form (a file that exists, JSON on every line, a row per CSV record);
what the fields must hold is the task's business (``Task.from_file``).

>>> rows = read_table([{"question": "2+2?", "answer": 4}])
>>> [(str(place), row) for place, row in rows]
[('records row 1', {'question': '2+2?', 'answer': 4})]
"""

from __future__ import annotations

import csv
import importlib.util
import json
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, NamedTuple

from madspy.core.errors import MadspyError, TaskError

Row = dict[str, Any]


class Place(NamedTuple):
    """Where a row came from: ``data.jsonl line 3``, ``data.parquet row 3``, ``DataFrame 'train' row 3``."""

    source: str
    unit: str  # "line" (JSONL, CSV: the line the record starts on) or "row"
    number: int  # 1-based

    def __str__(self) -> str:
        return f"{self.source} {self.unit} {self.number}"


Located = tuple[Place, Row]


def _jsonl(path: Path) -> list[Located]:
    """One JSON object per line; blank lines are skipped."""
    rows = []
    with path.open(encoding="utf-8-sig") as lines:
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            place = Place(str(path), "line", number)
            try:
                row = json.loads(line)
            except json.JSONDecodeError as error:
                raise TaskError(f"{place}: not valid JSON ({error.msg} at column {error.colno})") from None
            if not isinstance(row, dict):
                raise TaskError(f"{place}: expected a JSON object of fields, got a {type(row).__name__}")
            rows.append((place, row))
    return rows


def _csv(path: Path) -> list[Located]:
    """A header line, then one record per row (a quoted cell may span lines); every cell is text."""
    rows = []
    with path.open(encoding="utf-8-sig", newline="") as file:
        reader = csv.reader(file)
        header = next(reader, None)
        while header:
            place = Place(str(path), "line", reader.line_num + 1)
            try:
                cells = next(reader, None)
            except csv.Error as error:
                raise TaskError(f"{place}: unreadable CSV ({error})") from None
            if cells is None:
                break
            if not cells:  # a blank line
                continue
            if len(cells) != len(header):
                raise TaskError(f"{place}: {len(cells)} cells, but the header line has {len(header)}")
            rows.append((place, dict(zip(header, cells, strict=True))))
    return rows


def _parquet(path: Path) -> list[Located]:
    import pandas as pd

    try:
        frame = pd.read_parquet(path)
    except Exception as error:  # pyarrow's many errors for a file that is not Parquet
        raise TaskError(f"{path}: not a readable Parquet file ({_first_line(error)})") from error
    return _numbered(_frame_rows(frame), str(path))


_READERS: dict[str, Callable[[Path], list[Located]]] = {".jsonl": _jsonl, ".csv": _csv, ".parquet": _parquet}
FILE_TYPES = tuple(_READERS)


def is_data_file(spec: str | Path) -> bool:
    """Whether `spec` names a file `read_file` reads (by its extension).

    >>> is_data_file("questions.jsonl"), is_data_file("gsm8k")
    (True, False)
    """
    return Path(spec).suffix.lower() in _READERS


def read_file(path: Path) -> list[Located]:
    """The rows of a ``.jsonl``, ``.csv`` or ``.parquet`` file; ``TaskError`` for a missing, unreadable or empty one."""
    reader = _READERS.get(path.suffix.lower())
    if reader is None:
        raise TaskError(f"{path}: cannot read a {path.suffix or 'extensionless'} file; give a {', '.join(FILE_TYPES)}")
    if not path.is_file():
        raise TaskError(f"{path}: no such file")
    try:
        rows = reader(path)
    except UnicodeDecodeError as error:
        raise TaskError(f"{path}: not UTF-8 text ({error.reason} at byte {error.start})") from None
    if not rows:
        raise TaskError(f"{path}: empty file (no rows)")
    return rows


def read_table(table: Any, split: str | None = None) -> list[Located]:
    """The rows of records (a list of dicts), a pandas DataFrame or a ``datasets.Dataset``, numbered from 1.

    `split` names the split the table holds, for the places. Missing cells of a DataFrame read as None.
    """
    import datasets
    import pandas as pd

    if isinstance(table, list | tuple):
        kind, rows = "records", list(table)
    elif isinstance(table, pd.DataFrame):
        kind, rows = "DataFrame", _frame_rows(table)
    elif isinstance(table, datasets.Dataset):
        kind, rows = "Dataset", table.to_list()
    else:
        raise TaskError(
            f"cannot read rows from a {type(table).__name__}; give records (a list of dicts), a pandas DataFrame, "
            "a datasets.Dataset, or a dict of split -> one of those"
        )
    source = f"{kind} {split!r}" if split else kind
    if not rows:
        raise TaskError(f"{source}: no rows")
    return _numbered(rows, source)


def _frame_rows(frame: Any) -> list[Row]:
    """A DataFrame's rows as dicts of Python values, a missing cell (NaN, NA) as None."""
    return frame.astype(object).where(frame.notna(), None).to_dict("records")


def _numbered(rows: list[Any], source: str) -> list[Located]:
    located = []
    for number, row in enumerate(rows, 1):
        place = Place(source, "row", number)
        if not isinstance(row, Mapping):
            raise TaskError(f"{place}: expected a dict of fields, got a {type(row).__name__}")
        located.append((place, dict(row)))
    return located


def python_object(path: Path, name: str) -> object:
    """The object called `name` in the Python file `path`, which is run as a module (relative paths in it
    are relative to the working directory)."""
    if not path.is_file():
        raise TaskError(f"{path}: no such file")
    spec = importlib.util.spec_from_file_location(f"_madspy_task_file_{path.stem}", path)
    if spec is None or spec.loader is None:
        raise TaskError(f"{path}: cannot be loaded as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses in the file look their module up
    try:
        spec.loader.exec_module(module)
    except MadspyError:  # a task the file builds from bad data: that error names the data
        raise
    except Exception as error:
        raise TaskError(f"{path}: running it failed: {type(error).__name__}: {_first_line(error)}") from error
    if not hasattr(module, name):
        raise TaskError(f"{path}: defines no {name!r}")
    return getattr(module, name)


def _first_line(error: BaseException) -> str:
    return (str(error).strip().splitlines() or [""])[0]
