"""Benchmark tasks: how a question reads, where its rows live, and how answers score.

Rows come from, in order: the ``data_dir`` argument, the ``MADSPY_DATA_DIR``
environment variable, else the Hugging Face Hub. A data dir is laid out as
``<data_dir>/<task>/<file>``, e.g. ``<data_dir>/gsm8k/test.jsonl``.

>>> task = get_task("arithmetic")
>>> example = task.load(n=1, seed=0)[0]
>>> task.score(example.answer, example.answer), task.score("no idea", example.answer)
(1.0, 0.0)
"""

from __future__ import annotations

import functools
import inspect
import os
import random
import re
import string
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, NamedTuple, Protocol

import dspy

from madspy.core.errors import DataUnavailable, TaskError
from madspy.data import arithmetic
from madspy.data.scoring import (
    chrf_score,
    exact_score,
    last_boxed,
    normalize_choice,
    normalize_exact,
    normalize_latex,
    normalize_number,
    normalize_text,
    normalize_translation,
    normalize_yesno,
)
from madspy.programs.answers import read_answer
from madspy.programs.protocols import TaskKind

AnswerKind = Literal["number", "choice", "yesno", "text", "translation"]
Row = dict[str, Any]

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
class Task:
    """A benchmark: question format, data source and answer scoring.

    `to_fields` turns a raw row into Example fields: ``question``, the raw gold
    ``answer`` (None when missing), and optionally ``id`` and extras such as
    ``references``; returning None skips the row. `keep` selects rows of a
    shared file (one MMLU subject) without counting the others as skipped.
    `task_kind` picks the decision protocol of a debate whose protocol is ``auto``.
    `whole_number_answers` says every gold answer is an integer (GSM8K), so a fractional answer is
    wrong: what ``critic.integer_check`` relies on, and what makes it a knob of ``madspy search``.

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
