"""Task registry and loaders. Loader tests read the local benchmark copies; nothing goes online."""

import json
import os
from pathlib import Path

import datasets
import huggingface_hub.constants
import huggingface_hub.utils
import pytest

from madspy.core.errors import DataUnavailable
from madspy.data import DATA_DIR_ENV, TaskError, get_task, list_tasks, tasks
from madspy.data.arithmetic import Expression, generate


@pytest.fixture(scope="session")
def data_dir() -> Path:
    """MADSPY_DATA_DIR, else ../shared/data beside the repo; skip when neither exists."""
    configured = os.environ.get(DATA_DIR_ENV)
    folder = Path(configured) if configured else Path(__file__).resolve().parents[2] / "shared" / "data"
    if not folder.is_dir():
        pytest.skip(f"benchmark data not found at {folder}; set {DATA_DIR_ENV} to run loader tests")
    return folder


@pytest.fixture
def no_env_data_dir(monkeypatch):
    monkeypatch.delenv(DATA_DIR_ENV, raising=False)


TASKS = [
    ("gsm8k", {}),
    ("arc_challenge", {}),
    ("strategyqa", {}),
    ("commonsenseqa", {}),
    ("mmlu", {}),
    ("mmlu", {"subject": "anatomy"}),
    ("boolq", {}),
    ("math500", {}),
    ("bbh", {"subtask": "date_understanding"}),
    ("bbh", {"subtask": "object_counting"}),
    ("bbh", {"subtask": "web_of_lies"}),
    ("bbh", {"subtask": "dyck_languages"}),
    ("truthfulqa", {}),
    ("fever", {}),
    ("wmt22", {"pair": "de-en"}),
    ("wmt22", {"pair": "zh-en"}),
    ("arithmetic", {}),
]


def test_every_task_is_covered():
    assert sorted({name for name, _ in TASKS}) == list_tasks()


def test_task_kinds_follow_voting_or_consensus():
    kinds = {name: get_task(name, **options).task_kind for name, options in TASKS}
    assert {name for name, kind in kinds.items() if kind == "knowledge"} == {
        "arc_challenge",
        "commonsenseqa",
        "mmlu",
        "truthfulqa",
        "fever",
    }
    assert {name for name, kind in kinds.items() if kind == "open_ended"} == {"wmt22"}
    assert kinds["gsm8k"] == kinds["arithmetic"] == kinds["strategyqa"] == "reasoning"


@pytest.mark.parametrize(("name", "options"), TASKS)
def test_task_loads_five_examples(data_dir, name, options):
    task = get_task(name, **options)
    examples = task.load(n=5, data_dir=data_dir)
    assert len(examples) == 5
    assert len({example.id for example in examples}) == 5
    for example in examples:
        assert example.question.strip()
        assert set(example.inputs().keys()) == {"question"}
        assert isinstance(example.id, str) and example.id
        # The gold is already normalized, so it parses to itself and scores 1.
        assert task.normalize(example.answer) == example.answer
        assert task.score(example.answer, example.answer) == 1.0
        assert task.score("", example.answer) == 0.0
    if task.answer_kind == "choice" and name != "bbh":
        assert "\nA) " in examples[0].question


WHOLE_NUMBER_TASKS = [
    ("gsm8k", {}),
    ("bbh", {"subtask": "object_counting"}),
    ("bbh", {"subtask": "multistep_arithmetic_two"}),
]


def test_whole_number_answers_is_claimed_by_integer_tasks_only():
    tasks = {(name, options.get("subtask")): get_task(name, **options) for name, options in TASKS}
    claimed = {key for key, task in tasks.items() if task.whole_number_answers}
    assert claimed == {("gsm8k", None), ("bbh", "object_counting"), ("arithmetic", None)}
    assert all(example.answer.lstrip("-").isdigit() for example in get_task("arithmetic").load())


@pytest.mark.parametrize(("name", "options"), WHOLE_NUMBER_TASKS)
def test_whole_number_answers_holds_for_every_local_answer(data_dir, name, options):
    # The claim critic.integer_check relies on: a fractional answer is wrong on these tasks.
    task = get_task(name, **options)
    for split in task.splits:
        answers = [example.answer for example in task.load(split, data_dir=data_dir)]
        assert answers and all(answer.lstrip("-").isdigit() for answer in answers), (name, split)


def test_sampling_is_seeded(data_dir):
    task = get_task("gsm8k")
    ids = [example.id for example in task.load(n=5, seed=1, data_dir=data_dir)]
    assert ids == [example.id for example in task.load(n=5, seed=1, data_dir=data_dir)]
    assert ids != [example.id for example in task.load(n=5, seed=2, data_dir=data_dir)]


def test_data_dir_from_environment(data_dir, monkeypatch):
    monkeypatch.setenv(DATA_DIR_ENV, str(data_dir))
    report = get_task("gsm8k").load_with_report(n=2)
    assert report.source == str(data_dir / "gsm8k" / "test.jsonl")


def test_gsm8k_gold_is_the_number_after_the_marker(data_dir):
    first = get_task("gsm8k").load(data_dir=data_dir)[0]
    assert first.question.startswith("Janet’s ducks lay 16 eggs")
    assert first.answer == "18"


def test_math500_gold_is_the_last_boxed_answer(data_dir):
    first = get_task("math500").load(data_dir=data_dir)[0]
    # The solution ends with \boxed{\left( 3, \frac{\pi}{2} \right)}.
    assert first.answer == r"(3,\frac{\pi}{2})"


def test_mmlu_subject_filter(data_dir):
    examples = get_task("mmlu", subject="anatomy").load(data_dir=data_dir)
    assert len(examples) == 135


def test_truthfulqa_gold_letter_points_at_the_best_answer(data_dir):
    task = get_task("truthfulqa")
    first = task.load(data_dir=data_dir)[0]
    assert f"{first.answer}) The watermelon seeds pass through your digestive system" in first.question
    assert task.load(data_dir=data_dir)[0].question == first.question  # the shuffle is deterministic


def test_wmt22_keeps_all_references(data_dir):
    first = get_task("wmt22", pair="de-en").load(data_dir=data_dir)[0]
    assert first.answer == "The goods cost less than 20 euros."
    assert first.references == ["The goods cost less than 20 euros.", "The merchandise was less than 20 EURO."]
    assert "Die Ware hat unter 20 Euro gekostet." in first.question


def _write_jsonl(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))


def test_unparsable_gold_rows_are_skipped_and_counted(tmp_path):
    _write_jsonl(
        tmp_path / "gsm8k" / "test.jsonl",
        [
            {"question": "2+2?", "answer": "2+2=4\n#### 4"},
            {"question": "No marker", "answer": "The answer is 5"},
            {"question": "Big", "answer": "#### 1,234"},
        ],
    )
    report = get_task("gsm8k").load_with_report(data_dir=tmp_path)
    assert [example.answer for example in report.examples] == ["4", "1234"]
    assert [example.id for example in report.examples] == ["test-0", "test-2"]
    assert report.skipped == 1


def test_numeric_choice_labels_become_letters(tmp_path):
    _write_jsonl(
        tmp_path / "arc_challenge" / "test.jsonl",
        [
            {
                "id": "q1",
                "question": "Pick two.",
                "choices": {"text": ["one", "two", "three"], "label": ["1", "2", "3"]},
                "answerKey": "2",
            }
        ],
    )
    (example,) = get_task("arc_challenge").load(data_dir=tmp_path)
    assert example.question == "Pick two.\n\nA) one\nB) two\nC) three"
    assert example.answer == "B"
    assert example.id == "q1"


def test_unknown_task_lists_known_tasks():
    with pytest.raises(TaskError, match=r"known tasks: .*gsm8k"):
        get_task("gsm9k")


def test_unknown_option_and_subtask():
    with pytest.raises(TaskError, match=r"unknown option.*subject"):
        get_task("gsm8k", subject="anatomy")
    with pytest.raises(TaskError, match="date_understanding"):
        get_task("bbh")
    with pytest.raises(TaskError, match="unknown subject"):
        get_task("mmlu", subject="astrology")
    assert get_task("gsm8k", subject=None).name == "gsm8k"  # None options are ignored


def test_unknown_split_lists_splits(tmp_path):
    with pytest.raises(TaskError, match="unknown split 'dev'; splits: train, test"):
        get_task("gsm8k").load("dev", data_dir=tmp_path)


def test_missing_local_file_says_where_it_looked(tmp_path):
    with pytest.raises(TaskError) as error:
        get_task("boolq").load(data_dir=tmp_path)
    message = str(error.value)
    assert str(tmp_path / "boolq" / "validation.jsonl") in message
    assert "--data-dir" in message and DATA_DIR_ENV in message


def test_hub_is_tried_without_a_data_dir(monkeypatch, no_env_data_dir):
    calls = []

    def offline(*args, **kwargs):
        calls.append((args, kwargs))
        raise ConnectionError("no route to huggingface.co\nsecond line")

    monkeypatch.setattr(datasets, "load_dataset", offline)
    monkeypatch.setattr(tasks, "hub_unreachable", lambda: None)
    with pytest.raises(DataUnavailable) as error:  # a backend's fault: exit 1, HTTP 503
        get_task("gsm8k").load()
    assert calls == [(("openai/gsm8k",), {"name": "main", "split": "test"})]
    message = str(error.value)
    assert "openai/gsm8k" in message
    assert "ConnectionError: no route to huggingface.co" in message
    assert "second line" not in message
    assert "--data-dir" in message and DATA_DIR_ENV in message


class _NoNetwork:
    def head(self, url, timeout):
        raise OSError("[Errno -2] Name or service not known")


def test_unreachable_hub_fails_fast_without_downloading(monkeypatch, no_env_data_dir):
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(huggingface_hub.utils, "get_session", _NoNetwork)
    monkeypatch.setattr(datasets, "load_dataset", lambda *a, **k: pytest.fail("load_dataset was called"))
    with pytest.raises(DataUnavailable) as error:
        get_task("gsm8k").load()
    message = str(error.value)
    assert "Hub is unreachable" in message and "Name or service not known" in message
    assert "--data-dir" in message and "HF_HUB_OFFLINE=1" in message


def test_offline_mode_skips_the_probe_and_reads_the_cache(monkeypatch, no_env_data_dir):
    rows = [{"question": "1+1?", "answer": "#### 2"}]
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(huggingface_hub.utils, "get_session", lambda: pytest.fail("the Hub was probed"))
    monkeypatch.setattr(datasets, "load_dataset", lambda *a, **k: datasets.Dataset.from_list(rows))
    (example,) = get_task("gsm8k").load()
    assert example.answer == "2"


def test_arithmetic_gold_from_generated_numbers():
    (first,) = generate(1, seed=0)
    assert first == Expression(59, 63, 15, 43, 75, 72)
    # 59 + 63*15 + 43 - 75*72 = 59 + 945 + 43 - 5400 = -4353
    assert first.value == -4353
    assert first.text == "59+63*15+43-75*72"


def test_arithmetic_is_deterministic_per_seed():
    assert generate(5, seed=3) == generate(5, seed=3)
    assert generate(5, seed=3) != generate(5, seed=4)
    numbers = [n for expression in generate(200, seed=0) for n in vars(expression).values()]
    assert min(numbers) >= 10 and max(numbers) <= 99


def test_arithmetic_task_needs_no_data(no_env_data_dir):
    task = get_task("arithmetic")
    report = task.load_with_report(n=3, seed=0)
    assert report.source == "generated" and report.skipped == 0
    assert [example.id for example in report.examples] == [example.id for example in task.load(n=3, seed=0)]
    example = report.examples[0]
    assert example.question.startswith("What is the result of ")
    assert task.score(f"So the result is {example.answer}.", example.answer) == 1.0
