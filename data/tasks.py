"""Benchmark tasks: how a question reads, where its rows live, and how answers score.

A built-in task's rows come from, in order: the ``data_dir`` argument, the ``MADSPY_DATA_DIR``
environment variable, else the Hugging Face Hub. A data dir is laid out as
``<data_dir>/<task>/<file>``, e.g. ``<data_dir>/gsm8k/test.jsonl``. A user's task
(`Task.from_file`, `Task.from_rows`) holds its own rows, read and checked when it is built;
`resolve_task` turns a ``--task`` string (a name, a data file, ``my_task.py:task``) into a task.

>>> task = get_task("arithmetic")
>>> example = task.load(n=1, seed=0)[0]
>>> task.score(example.answer, example.answer), task.score("no idea", example.answer)
(1.0, 0.0)
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import json
import math
import os
import random
import re
import string
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any, Literal, NamedTuple, Protocol, TypeVar, get_args

import dspy

from madspy.core.errors import DataUnavailable, TaskError
from madspy.data import arithmetic
from madspy.data.scoring import (
    chrf_score,
    exact_score,
    format_number,
    last_boxed,
    normalize_choice,
    normalize_exact,
    normalize_latex,
    normalize_number,
    normalize_text,
    normalize_translation,
    normalize_yesno,
)
from madspy.data.user_data import (
    FILE_TYPES,
    Located,
    Place,
    Row,
    is_data_file,
    python_object,
    read_file,
    read_table,
)
from madspy.programs.answers import read_answer
from madspy.programs.protocols import TaskKind

AnswerKind = Literal["number", "choice", "yesno", "text", "translation"]
UserAnswerKind = Literal["number", "choice", "yesno", "text"]  # the kinds a user's task may have
USER_ANSWER_KINDS: tuple[str, ...] = get_args(UserAnswerKind)
Metric = Callable[[str, str], float]  # (normalized prediction, normalized gold) -> score
_T = TypeVar("_T")

DATA_DIR_ENV = "MADSPY_DATA_DIR"
CORRECT_AT = 0.5  # a score at or above it counts as a right answer
_POINT_AT_DATA = f"Pass --data-dir (data_dir=) or set {DATA_DIR_ENV} to a folder laid out as <data_dir>/<task>/<file>"
_LETTERS = string.ascii_uppercase


class LoadReport(NamedTuple):
    """What `Task.load_with_report` read.

    `skipped` counts the rows of the whole split (before sampling) whose gold
    answer did not parse; `source` is the file read, "hub:<id>" or "generated".
    """

    examples: list[dspy.Example]
    skipped: int
    source: str


class Source(Protocol):
    """Where a task's raw rows come from."""

    @property
    def splits(self) -> tuple[str, ...]: ...

    def read(self, task: str, split: str, data_dir: Path | None) -> tuple[list[Row], str]: ...


@dataclass(frozen=True)
class Files:
    """Rows from ``<data_dir>/<file>`` per split, or from a Hugging Face Hub dataset.

    `hub_splits` renames splits on the Hub (default: same name); `json_field`
    is the key holding the rows in a JSON document such as BIG-bench's
    ``{"examples": [...]}``.
    """

    files: Mapping[str, str]
    hub_id: str
    hub_config: str | None = None
    hub_splits: Mapping[str, str] | None = None
    json_field: str | None = None

    @property
    def splits(self) -> tuple[str, ...]:
        return tuple(self.files)

    def read(self, task: str, split: str, data_dir: Path | None) -> tuple[list[Row], str]:
        import datasets

        if data_dir is not None:
            path = data_dir / self.files[split]
            if not path.is_file():
                raise TaskError(
                    f"{task}: no data for split {split!r}; looked at {path}. {_POINT_AT_DATA}, "
                    f"or set neither to download {self.hub_id} from the Hugging Face Hub."
                )
            builder = "csv" if path.suffix == ".csv" else "json"
            field = {"field": self.json_field} if self.json_field else {}
            rows = datasets.load_dataset(builder, data_files=str(path), split="train", **field)
            return rows.to_list(), str(path)
        hub_split = (self.hub_splits or {}).get(split, split)
        unreachable = hub_unreachable()
        if unreachable:
            raise DataUnavailable(
                f"{task}: the Hugging Face Hub is unreachable ({unreachable}), so {self.hub_id} cannot be "
                f"downloaded. {_POINT_AT_DATA}, or set HF_HUB_OFFLINE=1 to use a copy in your Hugging Face cache."
            )
        try:
            rows = datasets.load_dataset(self.hub_id, name=self.hub_config, split=hub_split)
        except Exception as error:  # network, auth, missing config: all reported the same way
            reason = (str(error).strip().splitlines() or [""])[0]
            dataset = self.hub_id + (f" ({self.hub_config})" if self.hub_config else "")
            raise DataUnavailable(
                f"{task}: could not load {dataset} split {hub_split!r} from the Hugging Face Hub: "
                f"{type(error).__name__}: {reason}. {_POINT_AT_DATA}."
            ) from error
        return rows.to_list(), f"hub:{self.hub_id}"


def hub_unreachable(timeout_s: float = 5.0) -> str | None:
    """Why the Hub cannot be reached (one quick request), or None if it answers or we are offline by choice.

    Without this check an offline machine waits ~30 s of ``huggingface_hub`` retries
    before ``load_dataset`` fails. Any HTTP answer counts as reachable; the request goes
    through ``huggingface_hub``'s own session, so proxies and ``HF_ENDPOINT`` apply.
    With ``HF_HUB_OFFLINE=1`` nothing is sent and ``datasets`` reads its local cache.
    """
    from huggingface_hub import constants
    from huggingface_hub.utils import get_session

    if constants.HF_HUB_OFFLINE:
        return None
    try:
        get_session().head(constants.ENDPOINT, timeout=timeout_s)
    except Exception as error:  # DNS, refused, TLS, timeout: the transport's reason is the message
        return f"{constants.ENDPOINT}: {type(error).__name__}: {error}"
    return None


@dataclass(frozen=True)
class Generated:
    """Rows made in code (one "test" split); no files, no Hub."""

    make_rows: Callable[[], list[Row]]

    @property
    def splits(self) -> tuple[str, ...]:
        return ("test",)

    def read(self, task: str, split: str, data_dir: Path | None) -> tuple[list[Row], str]:
        return self.make_rows(), "generated"


@dataclass(frozen=True)
class UserRows:
    """A user's rows, read and checked when the task was built, as Example fields per split; `origin` is
    where they were read from (the files, or the tables: "DataFrame", "Dataset 'train'", "records"...)."""

    by_split: Mapping[str, Sequence[Row]]
    origin: str

    @property
    def splits(self) -> tuple[str, ...]:
        return tuple(self.by_split)

    def read(self, task: str, split: str, data_dir: Path | None) -> tuple[list[Row], str]:
        return list(self.by_split[split]), self.origin


@dataclass(frozen=True)
class SeededSplit:
    """Rows cut at random into train, dev and test: shuffled by ``random.Random(seed)``, then cut by the fractions
    (a split whose fraction is 0 is left out). Each split keeps the rows' order.

    A task built with one keeps it as ``Task.seeded_split``: ``dataclasses.asdict(task.seeded_split)`` is what a
    manifest records to cut the same splits from the same rows again.

    >>> SeededSplit(train=0.5, dev=0, test=0.5, seed=1).cut(list("abcdef"))
    {'train': ['c', 'd', 'f'], 'test': ['a', 'b', 'e']}
    """

    train: float = 0.2
    dev: float = 0.2
    test: float = 0.6
    seed: int = 0

    def __post_init__(self) -> None:
        fractions = self.fractions()
        if not all(0 <= f <= 1 for f in fractions.values()) or not math.isclose(sum(fractions.values()), 1):
            raise TaskError(f"seeded split: train, dev and test must be fractions from 0 to 1 adding up to 1 ({self})")

    def fractions(self) -> dict[str, float]:
        return {"train": self.train, "dev": self.dev, "test": self.test}

    def cut(self, items: Sequence[_T]) -> dict[str, list[_T]]:
        """`items` cut into the splits whose fraction is above 0: disjoint, together all of them."""
        order = list(range(len(items)))
        random.Random(self.seed).shuffle(order)
        cuts, start, total = {}, 0, 0.0
        for split, fraction in self.fractions().items():
            total += fraction
            end = round(total * len(items))
            if fraction:
                cuts[split] = [items[index] for index in sorted(order[start:end])]
            start = end
        return cuts


@dataclass(frozen=True)
class Task:
    """A benchmark: question format, data source and answer scoring.

    `to_fields` turns a raw row into Example fields: ``question``, the raw gold
    ``answer`` (None when missing), and optionally ``id`` and extras such as
    ``references``; returning None skips the row. `keep` selects rows of a
    shared file (one MMLU subject) without counting the others as skipped.
    `task_kind` picks the decision protocol of a debate whose protocol is ``auto``.
    `whole_number_answers` says every gold answer is an integer (GSM8K), so a fractional answer is
    wrong: what ``critic.integer_check`` relies on, and what makes it a knob of ``madspy search``.
    `seeded_split` is the `SeededSplit` (fractions and seed) that cut a user's rows into splits, else None.

    Built-in tasks come from `get_task`; a user's own from `Task.from_file` or `Task.from_rows`.

    >>> task = get_task("gsm8k")
    >>> task.answer_kind, task.task_kind, task.default_split, task.normalize("She makes $1,234.")
    ('number', 'reasoning', 'test', '1234')
    >>> task.whole_number_answers, get_task("math500").whole_number_answers
    (True, False)
    """

    name: str
    answer_kind: AnswerKind
    instructions: str
    source: Source
    default_split: str
    to_fields: Callable[[Row], Row | None]
    normalizer: Callable[[str | None], str | None]
    scorer: Callable[[str | None, str], float] = exact_score
    keep: Callable[[Row], bool] | None = None
    task_kind: TaskKind = "reasoning"
    whole_number_answers: bool = False
    seeded_split: SeededSplit | None = None
    # How `resolve_task` rebuilds a task it read from a file ({"task": spec, **file options}): what an eval folder's
    # settings and a compiled program's manifest record, so the task can be read again from them; None otherwise.
    recipe: Mapping[str, Any] | None = None

    @classmethod
    def from_file(
        cls,
        path: str | Path | Mapping[str, str | Path],
        *,
        answer_kind: UserAnswerKind,
        question_field: str = "question",
        answer_field: str = "answer",
        choices_field: str | None = None,
        id_field: str | None = None,
        split_field: str | None = None,
        seeded_split: SeededSplit | None = None,
        name: str | None = None,
        metric: Metric | None = None,
    ) -> Task:
        """A task of the rows in a ``.jsonl``, ``.csv`` or ``.parquet`` file, or in one file per split
        (``{"train": "train.jsonl", "test": "test.jsonl"}``), read and checked now.

        Fields and splits are read as `Task.from_rows` reads them; a CSV cell of choices holds a JSON list
        (``["red", "blue"]``). `name` defaults to the file's stem (the folder's name for one file per split).
        A malformed row raises ``TaskError`` naming the file, the line (the row, for Parquet) and the field.

        >>> import pathlib, tempfile
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "sums.jsonl"
        >>> _ = path.write_text('{"q": "2+2?", "a": 4}\\n{"q": "3+4?", "a": "7"}\\n')
        >>> task = Task.from_file(path, answer_kind="number", question_field="q", answer_field="a")
        >>> task.name, task.splits, [(e.id, e.answer) for e in task.load()]
        ('sums', ('test',), [('row-0', '4'), ('row-1', '7')])
        """
        files = dict(path) if isinstance(path, Mapping) else {None: path}
        parts = {split: read_file(Path(file)) for split, file in files.items()}
        first = Path(next(iter(files.values()), ""))
        default_name = first.stem if None in files else first.resolve().parent.name
        fields = _Fields(question_field, answer_field, choices_field, id_field, split_field)
        return _user_task(parts, name or default_name, answer_kind, fields, metric, seeded_split)

    @classmethod
    def from_rows(
        cls,
        rows: Any,
        *,
        answer_kind: UserAnswerKind,
        question_field: str = "question",
        answer_field: str = "answer",
        choices_field: str | None = None,
        id_field: str | None = None,
        split_field: str | None = None,
        seeded_split: SeededSplit | None = None,
        name: str = "user_task",
        metric: Metric | None = None,
    ) -> Task:
        """A task of rows in memory: records (a list of dicts), a pandas DataFrame, a ``datasets.Dataset``,
        or a dict of split -> one of those (a ``datasets.DatasetDict``), checked now.

        Each row's question, answer and (optional) choices and id are read from the fields named.
        `answer_kind` says how answers are read and compared: ``number`` ("1,234" -> "1234"), ``choice``
        (a letter, or the text of one of the choices), ``yesno`` (yes/no/true/false), ``text`` (lower case,
        no punctuation or articles). Choices (a list) are written under the question as "A) ..." lines and
        the gold becomes a letter. Without an id field, a row's id is its place, ``row-<i>`` (0-based), or
        ``<split>-<i>`` in a split given as its own table. `metric` (normalized prediction, normalized gold)
        -> score replaces exact match; a prediction that does not parse scores 0 without it being called.

        Splits are the ones given (a dict of tables, or a `split_field` naming each row's split), else
        `seeded_split` cuts the rows at random and is kept as ``task.seeded_split``, else all rows are one
        "test" split. The default split is "test" when there is one, else the first.

        >>> rows = [{"question": "The sky?", "options": ["green", "blue"], "answer": "blue"}]
        >>> task = Task.from_rows(rows, answer_kind="choice", choices_field="options", name="sky")
        >>> (example,) = task.load()
        >>> print(example.question)
        The sky?
        <BLANKLINE>
        A) green
        B) blue
        >>> example.answer, task.score("B) blue", example.answer)
        ('B', 1.0)
        """
        tables = dict(rows) if isinstance(rows, Mapping) else {None: rows}
        parts = {split: read_table(table, split) for split, table in tables.items()}
        fields = _Fields(question_field, answer_field, choices_field, id_field, split_field)
        return _user_task(parts, name, answer_kind, fields, metric, seeded_split)

    @property
    def splits(self) -> tuple[str, ...]:
        return self.source.splits

    def normalize(self, text: str | None) -> str | None:
        """The canonical answer in `text`, or None when it does not parse."""
        return self.normalizer(text)

    def ask(self, question: str) -> str:
        """The question as the debate sees it: with the task's answer-format line, if any."""
        return f"{question}\n\n{self.instructions}" if self.instructions else question

    def score(self, prediction: str | None, gold: str) -> float:
        """Score raw prediction text against a normalized gold answer (unparsable -> 0.0)."""
        return self.scorer(self.normalize(prediction), gold)

    def right(self, said: object, gold: str, question: str = "") -> bool:
        r"""Whether an answer field is right, read as a debate counts it (``read_answer``: an option of
        ``question`` written out is that option).

        >>> get_task("arc_challenge").right("Copper wire.", "B", "Which?\nA) wood\nB) copper wire")
        True
        """
        return self.score(read_answer(said, question, self.normalize), gold) >= CORRECT_AT

    def load(
        self,
        split: str | None = None,
        *,
        data_dir: str | Path | None = None,
        n: int | None = None,
        seed: int = 0,
        leave_out: Collection[str] = (),
    ) -> list[dspy.Example]:
        """Examples with ``question``, normalized ``answer`` and a stable ``id``; inputs = question.

        `split` defaults to `default_split`; `n` takes a random sample of n
        examples, the same for the same `seed` (all of them if n >= the count),
        drawn from those whose id is not in `leave_out` (say, questions an earlier
        sample held, for a test on fresh ones). Use `load_with_report` to also get
        the number of skipped rows.

        >>> task = get_task("arithmetic")
        >>> earlier = {e.id for e in task.load(n=5, seed=1)}
        >>> fresh = task.load(n=5, seed=1, leave_out=earlier)
        >>> len(fresh), earlier & {e.id for e in fresh}
        (5, set())
        """
        return self.load_with_report(split, data_dir=data_dir, n=n, seed=seed, leave_out=leave_out).examples

    def load_with_report(
        self,
        split: str | None = None,
        *,
        data_dir: str | Path | None = None,
        n: int | None = None,
        seed: int = 0,
        leave_out: Collection[str] = (),
    ) -> LoadReport:
        """Like `load`, plus how many rows were skipped for an unparsable gold and where rows came from."""
        split = split or self.default_split
        if split not in self.splits:
            raise TaskError(f"{self.name}: unknown split {split!r}; splits: {', '.join(self.splits)}")
        folder = data_dir or os.environ.get(DATA_DIR_ENV) or None
        rows, origin = self.source.read(self.name, split, Path(folder) if folder else None)
        examples, skipped = [], 0
        for index, row in enumerate(rows):
            if self.keep is not None and not self.keep(row):
                continue
            fields = self.to_fields(row)
            gold = self.normalize(fields["answer"]) if fields else None
            if gold is None:
                skipped += 1
                continue
            fields["answer"] = gold
            fields["id"] = str(fields["id"]) if fields.get("id") is not None else f"{split}-{index}"
            if fields["id"] in leave_out:
                continue
            examples.append(dspy.Example(**fields).with_inputs("question"))
        return LoadReport(_sample(examples, n, seed), skipped, origin)


def _sample(examples: list[dspy.Example], n: int | None, seed: int) -> list[dspy.Example]:
    """`n` examples drawn by ``random.Random(seed)``, kept in file order."""
    if n is None or n >= len(examples):
        return examples
    picked = sorted(random.Random(seed).sample(range(len(examples)), n))
    return [examples[index] for index in picked]


def _with_options(question: str, options: Sequence[str]) -> str:
    """The question followed by one "A) option" line per option."""
    lines = [f"{letter}) {option}" for letter, option in zip(_LETTERS, options, strict=False)]
    return question.strip() + "\n\n" + "\n".join(lines)


# Row converters: raw dataset row -> Example fields (see Task.to_fields).


_CALCULATOR = re.compile(r"<<[^>]*>>")  # GSM8K's calculator annotations, e.g. <<48/2=24>>


def _gsm8k_fields(row: Row) -> Row:
    """The question, the number after ``####`` and the worked solution before it (a gold rationale)."""
    rationale, marker, gold = row["answer"].rpartition("####")
    steps = [line.strip() for line in _CALCULATOR.sub("", rationale).splitlines() if line.strip()]
    return {"question": row["question"], "answer": gold if marker else None, "rationale": steps}


def _lettered_fields(row: Row) -> Row | None:
    """ARC / CommonsenseQA: choices {label, text} and an answerKey among the labels."""
    labels = list(row["choices"]["label"])
    if row["answerKey"] not in labels:
        return None
    return {
        "id": row["id"],
        "question": _with_options(row["question"], row["choices"]["text"]),
        "answer": _LETTERS[labels.index(row["answerKey"])],
    }


def _mmlu_fields(row: Row) -> Row | None:
    choices, answer = row["choices"], row["answer"]
    if not isinstance(answer, int) or not 0 <= answer < len(choices):
        return None
    return {"question": _with_options(row["question"], choices), "answer": _LETTERS[answer]}


def _strategyqa_fields(row: Row) -> Row:
    """Local rows have id and "Yes"/"No" (and an explanation: a gold rationale); Hub rows have qid and a bool."""
    fields = {"id": row.get("id") or row.get("qid"), "question": row["question"], "answer": str(row["answer"])}
    facts = row.get("explanation") or row.get("facts")
    if facts:
        fields["rationale"] = [facts] if isinstance(facts, str) else list(facts)
    return fields


def _boolq_fields(row: Row) -> Row:
    question = row["question"].strip().rstrip("?")
    return {"question": f"{row['passage']}\n\nQuestion: {question}?", "answer": str(row["answer"])}


def _math500_fields(row: Row) -> Row:
    steps = [p.strip() for p in row["solution"].split("\n\n") if p.strip()]
    return {"question": row["problem"], "answer": last_boxed(row["solution"]), "rationale": steps}


def _bbh_fields(row: Row) -> Row:
    return {"question": row["input"], "answer": row["target"]}


def _truthfulqa_fields(row: Row) -> Row | None:
    """Best answer plus incorrect answers, shuffled by a seed made of the question text.

    Reads the CSV's columns ("Best Answer", "Incorrect Answers" joined by ';')
    or the Hub's (best_answer, incorrect_answers list).
    """
    question = row.get("Question") or row.get("question")
    best = (row.get("Best Answer") or row.get("best_answer") or "").strip()
    wrong = row.get("Incorrect Answers") or row.get("incorrect_answers") or []
    if isinstance(wrong, str):
        wrong = wrong.split(";")
    if not question or not best:
        return None
    options = list(dict.fromkeys(option.strip() for option in [best, *wrong] if option.strip()))
    random.Random(f"truthfulqa:{question}").shuffle(options)
    return {"question": _with_options(question, options), "answer": _LETTERS[options.index(best)]}


_FEVER_LABELS = ("SUPPORTS", "REFUTES", "NOT ENOUGH INFO")


def _fever_fields(row: Row) -> Row | None:
    """BIG-bench rows (input, target_scores true/false) or FEVER rows (claim, label)."""
    if "target_scores" in row:
        scores = {option: score for option, score in row["target_scores"].items() if score is not None}
        question, options = row["input"], list(scores)
        correct = [option for option, score in scores.items() if score == 1]
    else:
        question = f"Claim: {row['claim']}\nQ: Do the facts support or refute this claim?"
        options, correct = list(_FEVER_LABELS), [row["label"]]
    if len(correct) != 1 or correct[0] not in options:
        return None
    return {
        "id": row.get("id"),
        "question": _with_options(question, options),
        "answer": _LETTERS[options.index(correct[0])],
    }


_LANGUAGES = {"de": "German", "en": "English", "zh": "Chinese"}


def _wmt22_fields(row: Row, pair: str) -> Row:
    """Local rows (source, references) or Hub rows ({pair: {src: ..., tgt: ...}})."""
    source_lang, target_lang = pair.split("-")
    if "source" in row:
        source, references = row["source"], list(row["references"])
    else:
        source, references = row[pair][source_lang], [row[pair][target_lang]]
    return {
        "id": row.get("id"),
        "question": f"Translate this {_LANGUAGES[source_lang]} text into {_LANGUAGES[target_lang]}:\n\n{source}",
        "answer": references[0] if references else None,
        "references": references,
    }


ARITHMETIC_POOL = 1000  # fixed questions "arithmetic-0".."arithmetic-999"; `n`/`seed` sample them


def _arithmetic_rows() -> list[Row]:
    return [
        {
            "id": f"arithmetic-{index}",
            "question": f"What is the result of {expression.text}?",
            "answer": str(expression.value),
        }
        for index, expression in enumerate(arithmetic.generate(ARITHMETIC_POOL, seed=0))
    ]


# Task builders. Each takes the task's options as keyword arguments.

_NORMALIZERS: dict[str, Callable[[str | None], str | None]] = {
    "number": normalize_number,
    "choice": normalize_choice,
    "yesno": normalize_yesno,
    "text": normalize_text,
    "translation": normalize_translation,
}
_INSTRUCTIONS = {
    "number": "Answer with a single number.",
    "choice": "Answer with the letter of one option.",
    "yesno": "Answer yes or no.",
}


def _task(
    name: str,
    kind: AnswerKind,
    source: Source,
    default_split: str,
    to_fields: Callable[[Row], Row | None],
    **overrides: Any,
) -> Task:
    """A Task with the kind's default normalizer, instructions and scorer unless overridden."""
    defaults = {
        "instructions": _INSTRUCTIONS.get(kind, ""),
        "normalizer": _NORMALIZERS[kind],
        "scorer": chrf_score if kind == "translation" else exact_score,
        "task_kind": "open_ended" if kind == "translation" else "reasoning",
    }
    return Task(name, kind, source=source, default_split=default_split, to_fields=to_fields, **(defaults | overrides))


def _gsm8k() -> Task:
    files = {"train": "gsm8k/train.jsonl", "test": "gsm8k/test.jsonl"}
    source = Files(files, "openai/gsm8k", "main")
    return _task("gsm8k", "number", source, "test", _gsm8k_fields, whole_number_answers=True)


def _arc_challenge() -> Task:
    files = {"validation": "arc_challenge/validation.jsonl", "test": "arc_challenge/test.jsonl"}
    source = Files(files, "allenai/ai2_arc", "ARC-Challenge")
    return _task("arc_challenge", "choice", source, "test", _lettered_fields, task_kind="knowledge")


def _commonsenseqa() -> Task:
    source = Files({"validation": "commonsenseqa/validation.jsonl"}, "tau/commonsense_qa")
    return _task("commonsenseqa", "choice", source, "validation", _lettered_fields, task_kind="knowledge")


def _strategyqa() -> Task:
    # The local file holds every labelled question; on the Hub they are split in two.
    source = Files({"all": "strategyqa/all.jsonl"}, "ChilleD/StrategyQA", hub_splits={"all": "train+test"})
    return _task("strategyqa", "yesno", source, "all", _strategyqa_fields)


def _boolq() -> Task:
    source = Files({"validation": "boolq/validation.jsonl"}, "google/boolq")
    return _task("boolq", "yesno", source, "validation", _boolq_fields)


def _math500() -> Task:
    source = Files({"test": "math500/test.jsonl"}, "HuggingFaceH4/MATH-500")
    return _task(
        "math500",
        "text",
        source,
        "test",
        _math500_fields,
        normalizer=normalize_latex,
        instructions=r"Give only the final answer, in LaTeX, e.g. \frac{1}{2}.",
    )


MMLU_SUBJECTS = tuple(
    "abstract_algebra anatomy astronomy business_ethics clinical_knowledge college_biology "
    "college_chemistry college_computer_science college_mathematics college_medicine college_physics "
    "computer_security conceptual_physics econometrics electrical_engineering elementary_mathematics "
    "formal_logic global_facts high_school_biology high_school_chemistry high_school_computer_science "
    "high_school_european_history high_school_geography high_school_government_and_politics "
    "high_school_macroeconomics high_school_mathematics high_school_microeconomics high_school_physics "
    "high_school_psychology high_school_statistics high_school_us_history high_school_world_history "
    "human_aging human_sexuality international_law jurisprudence logical_fallacies machine_learning "
    "management marketing medical_genetics miscellaneous moral_disputes moral_scenarios nutrition "
    "philosophy prehistory professional_accounting professional_law professional_medicine "
    "professional_psychology public_relations security_studies sociology us_foreign_policy virology "
    "world_religions".split()
)


def _mmlu(subject: str | None = None) -> Task:
    """All 57 subjects, or one (`subject=`)."""
    if subject is not None and subject not in MMLU_SUBJECTS:
        raise TaskError(f"mmlu: unknown subject {subject!r}; subjects: {', '.join(MMLU_SUBJECTS)}")
    files = {split: f"mmlu/{split}.jsonl" for split in ("dev", "validation", "test")}
    source = Files(files, "cais/mmlu", subject or "all")
    keep = (lambda row: row["subject"] == subject) if subject else None
    name = f"mmlu:{subject}" if subject else "mmlu"
    return _task(name, "choice", source, "test", _mmlu_fields, keep=keep, task_kind="knowledge")


_BBH_NUMBER = {"multistep_arithmetic_two", "object_counting"}
_BBH_YESNO = {
    "boolean_expressions": "Answer True or False.",
    "causal_judgement": "Answer yes or no.",
    "navigate": "Answer yes or no.",
    "sports_understanding": "Answer yes or no.",
    "web_of_lies": "Answer yes or no.",
}
_BBH_TEXT = {
    "dyck_languages": ("Answer with the closing brackets only, separated by spaces.", normalize_exact),
    "formal_fallacies": ("Answer valid or invalid.", normalize_text),
    "word_sorting": ("Answer with the sorted words separated by spaces.", normalize_text),
}
_BBH_CHOICE = {
    "date_understanding",
    "disambiguation_qa",
    "geometric_shapes",
    "hyperbaton",
    "logical_deduction_five_objects",
    "logical_deduction_seven_objects",
    "logical_deduction_three_objects",
    "movie_recommendation",
    "penguins_in_a_table",
    "reasoning_about_colored_objects",
    "ruin_names",
    "salient_translation_error_detection",
    "snarks",
    "temporal_sequences",
    "tracking_shuffled_objects_five_objects",
    "tracking_shuffled_objects_seven_objects",
    "tracking_shuffled_objects_three_objects",
}
BBH_SUBTASKS = tuple(sorted(_BBH_NUMBER | set(_BBH_YESNO) | set(_BBH_TEXT) | _BBH_CHOICE))


def _bbh(subtask: str | None = None) -> Task:
    """One BIG-Bench Hard subtask (`subtask=`, required); its answer kind follows the subtask."""
    if subtask not in BBH_SUBTASKS:
        raise TaskError(f"bbh needs subtask= one of: {', '.join(BBH_SUBTASKS)} (got {subtask!r})")
    source = Files({"test": f"bbh/bbh/{subtask}.json"}, "lukaemon/bbh", subtask, json_field="examples")
    name = f"bbh:{subtask}"
    if subtask in _BBH_NUMBER:
        return _task(name, "number", source, "test", _bbh_fields, whole_number_answers=True)
    if subtask in _BBH_YESNO:
        return _task(name, "yesno", source, "test", _bbh_fields, instructions=_BBH_YESNO[subtask])
    if subtask in _BBH_TEXT:
        instructions, normalizer = _BBH_TEXT[subtask]
        return _task(name, "text", source, "test", _bbh_fields, instructions=instructions, normalizer=normalizer)
    return _task(
        name, "choice", source, "test", _bbh_fields, instructions="Answer with the letter of one option, like (A)."
    )


def _truthfulqa() -> Task:
    source = Files({"validation": "truthfulqa/TruthfulQA.csv"}, "truthfulqa/truthful_qa", "generation")
    return _task("truthfulqa", "choice", source, "validation", _truthfulqa_fields, task_kind="knowledge")


def _fever() -> Task:
    # Local: BIG-bench's fever task.json (true/false); Hub: FEVER v1.0 claims (SUPPORTS/REFUTES).
    source = Files(
        {"validation": "fever/task.json"},
        "pminervini/hl-fever",
        "v1.0",
        hub_splits={"validation": "dev"},
        json_field="examples",
    )
    return _task("fever", "choice", source, "validation", _fever_fields, task_kind="knowledge")


WMT22_PAIRS = ("de-en", "zh-en", "en-zh")


def _wmt22(pair: str = "de-en") -> Task:
    """WMT22 translation for one language pair (`pair=`, default "de-en"); scored by chrF."""
    if pair not in WMT22_PAIRS:
        raise TaskError(f"wmt22: unknown pair {pair!r}; pairs: {', '.join(WMT22_PAIRS)}")
    source = Files({"test": f"wmt22/{pair}.jsonl"}, "haoranxu/WMT22-Test", pair)
    target = _LANGUAGES[pair.split("-")[1]]
    return _task(
        f"wmt22:{pair}",
        "translation",
        source,
        "test",
        functools.partial(_wmt22_fields, pair=pair),
        instructions=f"Answer with the {target} translation only.",
    )


def _arithmetic() -> Task:
    return _task("arithmetic", "number", Generated(_arithmetic_rows), "test", dict, whole_number_answers=True)


# A user's task: rows read by user_data, checked and turned into Example fields here. The rows come in
# parts: one per split the user gave, or the single part None of rows given undivided.


class _Fields(NamedTuple):
    """The user's names of a row's fields."""

    question: str
    answer: str
    choices: str | None
    id: str | None
    split: str | None


_NOT_AN_ANSWER = {
    "number": "is not a number",
    "choice": "is not an option letter (A, B, ...) or the text of an option",
    "yesno": "is not yes or no (or true or false)",
    "text": "has no words",
}


def _user_task(
    parts: Mapping[str | None, list[Located]],
    name: str,
    answer_kind: str,
    fields: _Fields,
    metric: Metric | None,
    seeded_split: SeededSplit | None,
) -> Task:
    """The task of a user's rows, given undivided (``{None: rows}``) or per split; ``TaskError`` at the
    first row that does not fit."""
    if not parts:
        raise TaskError(f"{name}: no rows given")
    if answer_kind not in USER_ANSWER_KINDS:
        raise TaskError(f"{name}: answer kind must be one of {', '.join(USER_ANSWER_KINDS)} (got {answer_kind!r})")
    if metric is not None and not callable(metric):
        raise TaskError(f"{name}: metric must be a function (prediction, gold) -> score, got {type(metric).__name__}")
    given = {
        "a table per split": None not in parts,
        "a split field": fields.split is not None,
        "a seeded split": seeded_split is not None,
    }
    ways = [way for way, used in given.items() if used]
    if len(ways) > 1:
        raise TaskError(f"{name}: the rows are split two ways ({' and '.join(ways)}); give one")
    checked = {part: _checked(located, part, answer_kind, fields) for part, located in parts.items()}
    _check_unique_ids(checked, fields.id)
    by_split = _split(checked, fields.split, seeded_split, name)
    golds = [row["answer"] for rows in by_split.values() for row in rows]
    return _task(
        name,
        answer_kind,
        UserRows(by_split, ", ".join(located[0][0].source for located in parts.values())),
        "test" if "test" in by_split else next(iter(by_split)),
        dict,
        whole_number_answers=answer_kind == "number" and all(gold.lstrip("-").isdigit() for gold in golds),
        seeded_split=seeded_split,
        **({"scorer": functools.partial(_metric_score, metric)} if metric else {}),
    )


def _metric_score(metric: Metric, prediction: str | None, gold: str) -> float:
    """A user's metric on a normalized prediction; one that does not parse scores 0."""
    return 0.0 if prediction is None else float(metric(prediction, gold))


def _checked(
    located: list[Located], part: str | None, answer_kind: str, fields: _Fields
) -> list[tuple[Place, Row, Row]]:
    """Each row's place, raw row and Example fields (question, answer, id: by default ``<split or row>-<i>``)."""
    return [
        (place, row, _user_fields(place, row, answer_kind, fields, default_id=f"{part or 'row'}-{index}"))
        for index, (place, row) in enumerate(located)
    ]


def _user_fields(place: Place, row: Row, answer_kind: str, fields: _Fields, default_id: str) -> Row:
    question = _field(place, row, fields.question)
    if not isinstance(question, str):
        raise TaskError(f"{place}: field {fields.question!r}: expected text, got {question!r}")
    choices = _choices(place, row, fields.choices) if fields.choices else None
    return {
        "id": str(_field(place, row, fields.id)) if fields.id else default_id,
        "question": _with_options(question, choices) if choices else question,
        "answer": _gold(place, _field(place, row, fields.answer), fields.answer, answer_kind, choices),
    }


def _field(place: Place, row: Row, field: str) -> Any:
    """The value of `field`; ``TaskError`` when it is missing or blank."""
    if field not in row:
        raise TaskError(f"{place}: field {field!r} is missing (the row has: {', '.join(map(str, row)) or 'nothing'})")
    value = row[field]
    if value is None or (isinstance(value, str) and not value.strip()):
        raise TaskError(f"{place}: field {field!r} is empty")
    return value


def _choices(place: Place, row: Row, field: str) -> list[str]:
    """A list of 2 to 26 options: a list (a Parquet or Dataset column of lists) or a JSON list in text (CSV)."""
    value = _field(place, row, field)
    options = _json_list(value) if isinstance(value, str) else value
    if hasattr(options, "tolist"):  # a numpy array, from Parquet or a DataFrame
        options = options.tolist()
    texts = [str(option).strip() for option in options] if isinstance(options, list | tuple) else []
    if not 2 <= len(texts) <= len(_LETTERS) or not all(texts):
        raise TaskError(
            f"{place}: field {field!r}: expected a list of 2 to {len(_LETTERS)} options "
            f'(in a CSV cell, a JSON list such as ["red", "blue"]), got {value!r}'
        )
    return texts


def _json_list(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return None


def _gold(place: Place, value: Any, field: str, answer_kind: str, choices: list[str] | None) -> str:
    """The normalized gold answer; for choices, the letter of the option it names (its letter or its text)."""
    text = format_number(Fraction(repr(value))) if isinstance(value, float) and math.isfinite(value) else str(value)
    if choices and text.strip() in choices:
        return _LETTERS[choices.index(text.strip())]
    gold = _NORMALIZERS[answer_kind](text)
    if gold is None:
        raise TaskError(f"{place}: field {field!r}: {value!r} {_NOT_AN_ANSWER[answer_kind]}")
    if choices and _LETTERS.index(gold) >= len(choices):
        raise TaskError(
            f"{place}: field {field!r}: {value!r} is not one of the {len(choices)} choices "
            f"(A-{_LETTERS[len(choices) - 1]}) or the text of one"
        )
    return gold


def _check_unique_ids(checked: Mapping[str | None, list[tuple[Place, Row, Row]]], id_field: str | None) -> None:
    first: dict[str, Place] = {}
    for place, _, fields in (item for rows in checked.values() for item in rows):
        key = fields["id"]
        if key in first:
            raise TaskError(f"{place}: field {id_field!r}: id {key!r} is already the id of {first[key]}")
        first[key] = place


def _split(
    checked: Mapping[str | None, list[tuple[Place, Row, Row]]],
    split_field: str | None,
    seeded_split: SeededSplit | None,
    name: str,
) -> dict[str, list[Row]]:
    """The rows' Example fields per split: as given, by the split field, cut by the seeded split, or all "test"."""
    if None not in checked:
        return {part: [fields for _, _, fields in rows] for part, rows in checked.items()}
    rows = checked[None]
    if split_field is not None:
        by_split: dict[str, list[Row]] = {}
        for place, row, fields in rows:
            by_split.setdefault(str(_field(place, row, split_field)).strip(), []).append(fields)
        return by_split
    if seeded_split is None:
        return {"test": [fields for _, _, fields in rows]}
    cuts = seeded_split.cut([fields for _, _, fields in rows])
    empty = [split for split, cut in cuts.items() if not cut]
    if empty:
        raise TaskError(f"{name}: {len(rows)} rows leave split {empty[0]!r} of {seeded_split} empty; give more rows")
    return cuts


_BUILDERS: dict[str, Callable[..., Task]] = {
    "arc_challenge": _arc_challenge,
    "arithmetic": _arithmetic,
    "bbh": _bbh,
    "boolq": _boolq,
    "commonsenseqa": _commonsenseqa,
    "fever": _fever,
    "gsm8k": _gsm8k,
    "math500": _math500,
    "mmlu": _mmlu,
    "strategyqa": _strategyqa,
    "truthfulqa": _truthfulqa,
    "wmt22": _wmt22,
}


def list_tasks() -> list[str]:
    """Names accepted by `get_task`.

    >>> "gsm8k" in list_tasks()
    True
    """
    return sorted(_BUILDERS)


def get_task(name: str, **options: str | None) -> Task:
    """The task called `name`; options: mmlu ``subject=``, bbh ``subtask=``, wmt22 ``pair=``.

    Options set to None are ignored, so a CLI can pass all of them.

    >>> get_task("mmlu", subject="anatomy").name
    'mmlu:anatomy'
    """
    builder = _BUILDERS.get(name)
    if builder is None:
        raise TaskError(f"unknown task {name!r}; known tasks: {', '.join(list_tasks())}")
    given = {key: value for key, value in options.items() if value is not None}
    accepted = inspect.signature(builder).parameters
    unknown = sorted(set(given) - set(accepted))
    if unknown:
        raise TaskError(f"{name}: unknown option(s) {', '.join(unknown)}; it accepts: {', '.join(accepted) or 'none'}")
    return builder(**given)


_PYTHON_FILE = re.compile(r"(?P<path>.+\.py)(?::(?P<attribute>\w+))?")


def resolve_task(spec: str | Path, **file_options: Any) -> Task:
    """The task a ``--task`` string names: a built-in task (``gsm8k``, or ``mmlu:anatomy`` with its option),
    a data file (``.jsonl``, ``.csv``, ``.parquet``) read by `Task.from_file` with `file_options`
    (``answer_kind=`` is required), or the `Task` a Python file defines (``my_task.py:task``; ``my_task.py``
    alone means its ``task``). Options set to None are ignored, so a CLI can pass all of them.

    >>> resolve_task("gsm8k").name, resolve_task("mmlu:anatomy").name
    ('gsm8k', 'mmlu:anatomy')
    >>> resolve_task("nowhere.jsonl", answer_kind="number")
    Traceback (most recent call last):
    madspy.core.errors.TaskError: nowhere.jsonl: no such file
    """
    spec = str(spec)
    options = {key: value for key, value in file_options.items() if value is not None}
    if is_data_file(spec):
        if "answer_kind" not in options:
            raise TaskError(f"{spec}: a data file needs an answer kind: one of {', '.join(USER_ANSWER_KINDS)}")
        return dataclasses.replace(Task.from_file(spec, **options), recipe={"task": spec, **options})
    if options:
        raise TaskError(f"{spec}: {', '.join(options)}: only for a data file ({', '.join(FILE_TYPES)})")
    python_file = _PYTHON_FILE.fullmatch(spec)
    if python_file:
        path, attribute = Path(python_file["path"]), python_file["attribute"] or "task"
        task = python_object(path, attribute)
        if not isinstance(task, Task):
            raise TaskError(f"{path}: {attribute} is a {type(task).__name__}, not a madspy.Task")
        return dataclasses.replace(task, recipe={"task": spec})
    return _builtin(spec)


def recorded_task(record: Mapping[str, Any]) -> Task:
    """The task an eval folder's settings or a program's manifest names: rebuilt from its ``task_recipe`` (a task
    read from a file), else by its name.

    >>> recorded_task({"task": "mmlu:anatomy"}).name
    'mmlu:anatomy'
    """
    recipe = record.get("task_recipe")
    return resolve_task(**recipe) if recipe else resolve_task(record["task"])


def _builtin(spec: str) -> Task:
    """A built-in task by name, or by ``name:option`` as its `Task.name` spells it (``bbh:navigate``)."""
    name, _, option = spec.partition(":")
    if name not in _BUILDERS:
        raise TaskError(
            f"unknown task {spec!r}: give a task name ({', '.join(list_tasks())}), a data file "
            f"({', '.join(FILE_TYPES)}) or a Python file's task (my_task.py:task)"
        )
    accepted = list(inspect.signature(_BUILDERS[name]).parameters)
    if option and len(accepted) != 1:
        raise TaskError(f"{name} takes no option (got {spec!r})")
    return get_task(name, **({accepted[0]: option} if option else {}))
