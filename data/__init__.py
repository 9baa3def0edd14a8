"""Benchmark tasks, a user's own tasks, and answer scoring.

>>> from madspy.data import Task, get_task, resolve_task
>>> get_task("gsm8k").instructions
'Answer with a single number.'
>>> isinstance(resolve_task("arithmetic"), Task)
True
"""

from madspy.data.scoring import (
    chrf_score,
    corpus_translation_scores,
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
from madspy.data.tasks import (
    BBH_SUBTASKS,
    CORRECT_AT,
    DATA_DIR_ENV,
    MMLU_SUBJECTS,
    USER_ANSWER_KINDS,
    WMT22_PAIRS,
    AnswerKind,
    LoadReport,
    SeededSplit,
    Task,
    TaskError,
    get_task,
    list_tasks,
    recorded_task,
    resolve_task,
)

__all__ = [
    "BBH_SUBTASKS",
    "CORRECT_AT",
    "DATA_DIR_ENV",
    "MMLU_SUBJECTS",
    "USER_ANSWER_KINDS",
    "WMT22_PAIRS",
    "AnswerKind",
    "LoadReport",
    "SeededSplit",
    "Task",
    "TaskError",
    "chrf_score",
    "corpus_translation_scores",
    "exact_score",
    "get_task",
    "last_boxed",
    "list_tasks",
    "normalize_choice",
    "normalize_exact",
    "normalize_latex",
    "normalize_number",
    "normalize_text",
    "normalize_translation",
    "normalize_yesno",
    "recorded_task",
    "resolve_task",
]
