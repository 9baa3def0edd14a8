"""A user's own task: built from a file or a table, fields mapped, splits kept or seeded; one-line errors."""

import argparse
import json
from pathlib import Path

import datasets
import pandas as pd
import pytest

import madspy
from madspy.cli.evaluate import add_task_options, task_from_args
from madspy.data import SeededSplit, Task, TaskError, get_task, resolve_task

SUMS = [
    {"qid": "s1", "prompt": "What is 2 + 2?", "solution": 4},
    {"qid": "s2", "prompt": "What is 10 / 4?", "solution": "2.5"},
    {"qid": "s3", "prompt": "What is 1,000 + 234?", "solution": "1,234"},
]
SUM_FIELDS = {"question_field": "prompt", "answer_field": "solution", "id_field": "qid"}
COLOURS = [
    {"question": "The sky on a clear day?", "options": ["green", "blue", "red"], "answer": "blue"},
    {"question": "Grass?", "options": ["green", "blue", "red"], "answer": "A"},
]


def _jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def _one_line_error(call, *parts: str) -> None:
    """`call` raises a TaskError of one line holding every part (file, line, field...)."""
    with pytest.raises(TaskError) as error:
        call()
    message = str(error.value)
    assert "\n" not in message
    for part in parts:
        assert part in message, (part, message)


def _sums_are_read(task: Task) -> None:
    examples = task.load()
    assert [(e.id, e.answer) for e in examples] == [("s1", "4"), ("s2", "2.5"), ("s3", "1234")]
    assert examples[0].question == "What is 2 + 2?"
    assert set(examples[0].inputs().keys()) == {"question"}
    assert task.answer_kind == "number" and task.splits == ("test",) and task.default_split == "test"
    assert task.score("So it is 1,234.", "1234") == 1.0 and task.score("twelve", "1234") == 0.0
    assert task.ask("Q?") == "Q?\n\nAnswer with a single number."


# -- each format ---------------------------------------------------------------------


def test_jsonl_with_mapped_fields(tmp_path):
    task = Task.from_file(_jsonl(tmp_path / "sums.jsonl", SUMS), answer_kind="number", **SUM_FIELDS)
    _sums_are_read(task)
    assert task.name == "sums"
    assert task.load_with_report().source == str(tmp_path / "sums.jsonl")


def test_csv_with_mapped_fields(tmp_path):
    path = tmp_path / "sums.csv"
    pd.DataFrame(SUMS).to_csv(path, index=False)
    _sums_are_read(Task.from_file(path, answer_kind="number", **SUM_FIELDS))


def test_parquet_with_mapped_fields(tmp_path):
    path = tmp_path / "sums.parquet"
    pd.DataFrame(SUMS).astype({"solution": str}).to_parquet(path)
    _sums_are_read(Task.from_file(path, answer_kind="number", **SUM_FIELDS))


def test_dataframe_and_dataset_and_records():
    for rows in (pd.DataFrame(SUMS).astype({"solution": str}), datasets.Dataset.from_list(SUMS[:1]), SUMS):
        task = Task.from_rows(rows, answer_kind="number", name="sums", **SUM_FIELDS)
        assert task.load()[0].answer == "4"
        assert task.name == "sums"


def test_without_an_id_field_a_row_is_named_by_its_place(tmp_path):
    rows = [{"question": "Yes?", "answer": True}, {"question": "No?", "answer": "no"}]
    task = Task.from_file(_jsonl(tmp_path / "yn.jsonl", rows), answer_kind="yesno")
    assert [(e.id, e.answer) for e in task.load()] == [("row-0", "yes"), ("row-1", "no")]


# -- choices, kinds, metric ----------------------------------------------------------


def test_choices_are_written_as_built_in_tasks_write_them(tmp_path):
    task = Task.from_rows(COLOURS, answer_kind="choice", choices_field="options")
    first, second = task.load()
    assert first.question == "The sky on a clear day?\n\nA) green\nB) blue\nC) red"
    assert (first.answer, second.answer) == ("B", "A")  # the option's text, or its letter
    assert task.ask("Q") == "Q\n\n" + get_task("arc_challenge").instructions
    assert task.right("Blue.", "B", first.question)  # an option written out is that option


def test_choices_from_csv_json_lists_and_parquet_lists(tmp_path):
    frame = pd.DataFrame(COLOURS)
    parquet = tmp_path / "colours.parquet"
    frame.to_parquet(parquet)
    csv_file = tmp_path / "colours.csv"
    frame.assign(options=frame["options"].map(json.dumps)).to_csv(csv_file, index=False)
    for path in (parquet, csv_file):
        task = Task.from_file(path, answer_kind="choice", choices_field="options")
        assert [e.question.splitlines()[-1] for e in task.load()] == ["C) red", "C) red"]
        assert [e.answer for e in task.load()] == ["B", "A"]


def test_text_kind_and_a_user_metric():
    rows = [{"question": "Tallest tower in Paris?", "answer": "The Eiffel Tower"}]
    calls = []

    def overlap(prediction: str, gold: str) -> float:
        calls.append((prediction, gold))
        return len(set(prediction.split()) & set(gold.split())) / len(gold.split())

    task = Task.from_rows(rows, answer_kind="text", metric=overlap)
    (example,) = task.load()
    assert example.answer == "eiffel tower"
    assert task.score("the Eiffel", example.answer) == 0.5
    assert task.score("", example.answer) == 0.0  # does not parse: 0, the metric is not called
    assert calls == [("eiffel", "eiffel tower")]
    assert Task.from_rows(rows, answer_kind="text").score("eiffel tower!", example.answer) == 1.0


def test_whole_number_answers_follow_the_golds():
    assert Task.from_rows(SUMS[:1], answer_kind="number", **SUM_FIELDS).whole_number_answers
    assert not Task.from_rows(SUMS, answer_kind="number", **SUM_FIELDS).whole_number_answers


# -- splits --------------------------------------------------------------------------


def _numbered(count: int) -> list[dict]:
    return [{"question": f"What is {i} + 1?", "answer": i + 1} for i in range(count)]


def test_seeded_split_is_deterministic_disjoint_and_recorded():
    rows = _numbered(50)
    task = Task.from_rows(rows, answer_kind="number", seeded_split=SeededSplit(train=0.2, dev=0.2, test=0.6, seed=3))
    ids = {split: [e.id for e in task.load(split)] for split in task.splits}
    assert task.splits == ("train", "dev", "test") and task.default_split == "test"
    assert {split: len(got) for split, got in ids.items()} == {"train": 10, "dev": 10, "test": 30}
    every = [id_ for split_ids in ids.values() for id_ in split_ids]
    assert sorted(every) == sorted(f"row-{i}" for i in range(50))  # disjoint, and all of the rows
    assert task.seeded_split == SeededSplit(train=0.2, dev=0.2, test=0.6, seed=3)
    again = Task.from_rows(rows, answer_kind="number", seeded_split=SeededSplit(0.2, 0.2, 0.6, seed=3))
    assert {split: [e.id for e in again.load(split)] for split in again.splits} == ids
    other = Task.from_rows(rows, answer_kind="number", seeded_split=SeededSplit(0.2, 0.2, 0.6, seed=4))
    assert [e.id for e in other.load("train")] != ids["train"]


def test_seeded_split_checks_its_fractions_and_its_splits():
    _one_line_error(lambda: SeededSplit(train=0.5, dev=0.5, test=0.5), "adding up to 1")
    split = SeededSplit(train=0.1, dev=0.1, test=0.8)
    _one_line_error(lambda: Task.from_rows(_numbered(3), answer_kind="number", seeded_split=split), "'train'", "empty")


def test_the_users_splits_by_file_by_table_and_by_field(tmp_path):
    files = {"train": _jsonl(tmp_path / "train.jsonl", _numbered(2)), "test": _jsonl(tmp_path / "test.jsonl", SUMS)}
    _one_line_error(lambda: Task.from_file(files, answer_kind="number"), "test.jsonl line 1", "'question' is missing")
    _jsonl(files["test"], _numbered(3))
    by_file = Task.from_file(files, answer_kind="number")
    assert by_file.name == tmp_path.name
    assert by_file.splits == ("train", "test") and by_file.seeded_split is None
    assert [e.id for e in by_file.load("test")] == ["test-0", "test-1", "test-2"]
    tables = datasets.DatasetDict({"dev": datasets.Dataset.from_list(_numbered(3))})
    by_table = Task.from_rows({**tables, "train": pd.DataFrame(_numbered(2))}, answer_kind="number")
    assert by_table.splits == ("dev", "train") and by_table.default_split == "dev"
    assert [e.id for e in by_table.load("train")] == ["train-0", "train-1"]
    rows = [{**row, "part": "train" if i % 2 else "test"} for i, row in enumerate(_numbered(4))]
    by_field = Task.from_rows(rows, answer_kind="number", split_field="part")
    assert [e.id for e in by_field.load("train")] == ["row-1", "row-3"]
    _one_line_error(
        lambda: Task.from_rows(rows, answer_kind="number", split_field="part", seeded_split=SeededSplit()),
        "a split field and a seeded split",
    )


# -- a task file ---------------------------------------------------------------------


def test_a_python_file_defines_the_task(tmp_path, monkeypatch):
    _jsonl(tmp_path / "sums.jsonl", SUMS)
    (tmp_path / "my_task.py").write_text(
        "import madspy\n"
        "task = madspy.Task.from_file('sums.jsonl', answer_kind='number', question_field='prompt',\n"
        "                             answer_field='solution', id_field='qid', name='my-sums')\n"
        "other = 'not a task'\n"
    )
    monkeypatch.chdir(tmp_path)  # the file's relative paths are the working directory's
    for spec in ("my_task.py:task", "my_task.py", str(tmp_path / "my_task.py:task")):
        task = resolve_task(spec)
        assert isinstance(task, madspy.Task) and task.name == "my-sums"
    _one_line_error(lambda: resolve_task("my_task.py:other"), "my_task.py", "other is a str, not a madspy.Task")
    _one_line_error(lambda: resolve_task("my_task.py:missing"), "my_task.py", "defines no 'missing'")
    _one_line_error(lambda: resolve_task("nowhere.py:task"), "nowhere.py: no such file")
    (tmp_path / "broken.py").write_text("task = (\n")
    _one_line_error(lambda: resolve_task("broken.py"), "broken.py: running it failed: SyntaxError")


def test_a_data_file_on_the_command_line(tmp_path):
    path = _jsonl(tmp_path / "sums.jsonl", SUMS)
    parser = argparse.ArgumentParser()
    add_task_options(parser)
    flags = ["--question-field", "prompt", "--answer-field", "solution", "--id-field", "qid"]
    args = parser.parse_args(["--task", str(path), "--answer-kind", "number", *flags])
    _sums_are_read(task_from_args(args))
    assert task_from_args(parser.parse_args(["--task", "arithmetic"])).name == "arithmetic"
    no_kind = parser.parse_args(["--task", str(path), *flags])
    _one_line_error(lambda: task_from_args(no_kind), "sums.jsonl", "needs an answer kind")
    mapped_builtin = parser.parse_args(["--task", "gsm8k", "--answer-kind", "number"])
    _one_line_error(lambda: task_from_args(mapped_builtin), "gsm8k", "only for a data file")


def test_built_in_tasks_are_the_same_public_class():
    assert isinstance(get_task("arithmetic"), madspy.Task)
    assert madspy.Task is Task
    assert resolve_task("mmlu:anatomy").name == "mmlu:anatomy"
    _one_line_error(lambda: resolve_task("gsm9k"), "unknown task 'gsm9k'", "gsm8k", "my_task.py:task")


# -- malformed input: one line naming the file, the line and the field ----------------


def test_a_missing_field(tmp_path):
    path = _jsonl(tmp_path / "d.jsonl", [{"question": "1?", "answer": 1}, {"question": "2?"}])
    _one_line_error(
        lambda: Task.from_file(path, answer_kind="number"), f"{path} line 2: field 'answer' is missing", "question"
    )
    frame = pd.DataFrame([{"question": "1?", "answer": 1}, {"question": "2?"}])  # a NaN answer
    _one_line_error(lambda: Task.from_rows(frame, answer_kind="number"), "DataFrame row 2: field 'answer' is empty")


def test_an_answer_of_the_wrong_kind(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text('question,answer\n"A question\nover two lines",12\nNext?,twelve\n')
    _one_line_error(lambda: Task.from_file(path, answer_kind="number"), f"{path} line 4: field 'answer': 'twelve'")
    rows = [{**COLOURS[0], "answer": "E"}]
    jsonl = _jsonl(tmp_path / "c.jsonl", rows)
    _one_line_error(
        lambda: Task.from_file(jsonl, answer_kind="choice", choices_field="options"),
        f"{jsonl} line 1: field 'answer': 'E' is not one of the 3 choices (A-C)",
    )
    rows = [{**COLOURS[0], "options": "blue"}]
    _one_line_error(
        lambda: Task.from_rows(rows, answer_kind="choice", choices_field="options"),
        "records row 1: field 'options': expected a list of 2 to 26 options",
    )
    _one_line_error(
        lambda: Task.from_rows(COLOURS, answer_kind="yesno"), "records row 1: field 'answer': 'blue' is not yes or no"
    )
    _one_line_error(lambda: Task.from_rows(COLOURS, answer_kind="translation"), "answer kind must be one of")


def test_an_empty_or_missing_file(tmp_path):
    for name in ("empty.jsonl", "empty.csv"):
        (tmp_path / name).write_text("\n" if name.endswith("jsonl") else "question,answer\n")
        _one_line_error(lambda n=name: Task.from_file(tmp_path / n, answer_kind="text"), name, "empty file")
    _one_line_error(lambda: Task.from_file(tmp_path / "none.csv", answer_kind="text"), "none.csv: no such file")
    _one_line_error(lambda: Task.from_file(tmp_path / "d.txt", answer_kind="text"), "d.txt: cannot read a .txt file")
    _one_line_error(lambda: Task.from_rows([], answer_kind="text"), "records: no rows")


def test_a_duplicated_id(tmp_path):
    rows = [{"id": "q1", "question": "1?", "answer": 1}, {"id": "q2", "question": "2?", "answer": 2}]
    path = _jsonl(tmp_path / "d.jsonl", [*rows, {**rows[0], "question": "3?"}])
    _one_line_error(
        lambda: Task.from_file(path, answer_kind="number", id_field="id"),
        f"{path} line 3: field 'id': id 'q1' is already the id of {path} line 1",
    )


def test_unreadable_json_on_a_line(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_text('{"question": "1?", "answer": 1}\n\n{"question": "2?", answer: 2}\n[1, 2]\n')
    _one_line_error(lambda: Task.from_file(path, answer_kind="number"), f"{path} line 3: not valid JSON")
    path.write_text('{"question": "1?", "answer": 1}\n[1, 2]\n')
    _one_line_error(lambda: Task.from_file(path, answer_kind="number"), f"{path} line 2: expected a JSON object")
