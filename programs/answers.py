"""Turn an agent's free-text answer into the key votes are counted on.

Example:
    >>> from madspy.programs.answers import normalize_answer
    >>> normalize_answer(" $1,200.00. "), normalize_answer("Yes!"), normalize_answer("  ")
    ('1200', 'yes', None)
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation

_STRIP = " \t\n\r.,;:!?\"'`*()[]"


def _as_number(text: str) -> str | None:
    cleaned = text.replace(",", "").replace("$", "").replace("%", "").strip()
    try:
        value = Decimal(cleaned)
    except InvalidOperation:
        return None
    if not value.is_finite():
        return None
    return format(value.normalize(), "f") if value != value.to_integral() else str(value.to_integral())


def normalize_answer(answer: str | None) -> str | None:
    """Case- and punctuation-insensitive key; numbers in canonical form; None if empty."""
    if answer is None:
        return None
    text = " ".join(str(answer).split()).strip(_STRIP).casefold()
    if not text:
        return None
    return _as_number(text) or text
