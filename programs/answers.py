"""Turn an agent's free-text answer into the key votes are counted on.

Example:
    >>> from madspy.programs.answers import clean_answer, normalize_answer
    >>> normalize_answer(" $1,200.00. "), normalize_answer("Yes!"), normalize_answer("  ")
    ('1200', 'yes', None)
    >>> clean_answer("answer: 8 (confidence 0.95)")
    '8'
"""

from __future__ import annotations

import re
from collections.abc import Callable
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


# Peers' proposals are shown as "answer: X (confidence c)" (``format_proposal``); agents
# sometimes copy that whole line, or "agent k: answer: X", into their own answer field.
_ECHOED_LABEL = re.compile(r"^\s*(?:agent\s*\d+\s*:\s*)?(?:answer\s*:\s*)+", re.IGNORECASE)
_ECHOED_CONFIDENCE = re.compile(r"(?:\s*\(\s*confidence\s*:?\s*[0-9.]+\s*%?\s*\))+\s*$", re.IGNORECASE)
# The digest (``distinct.digest``) heads each answer "X: held by 2 of 3 debaters (agents 0, 2), mean
# confidence 0.80"; revisers on arc_challenge copied that head into their answer field.
_ECHOED_DIGEST = re.compile(r"\s*[:)]?\s*held by \d+ of \d+ debaters?\b.*$", re.IGNORECASE)


def strip_echo(answer: str) -> str:
    """``answer`` without the label, confidence and support of the formats peers' answers are shown in.

    Without this a number normalizer reads "8 (confidence 0.95)" as 0.95, a choice
    normalizer finds no letter in "answer: C (confidence 0.80)" and the user reads
    "D: held by 1 of 3 debaters (agent 2), mean confidence 0.80" as the answer. An
    answer that is nothing but the decoration is left as it is.

    >>> strip_echo("agent 2: answer: C (confidence 0.80) (confidence 0.80)"), strip_echo("Answer: 12")
    ('C', '12')
    >>> strip_echo("7: held by 2 of 3 debaters (agents 0, 2), mean confidence 0.80")
    '7'
    >>> strip_echo("A) held by 1 of 3 debaters (agent 1), mean confidence 0.00")
    'A'
    >>> strip_echo("The confidence interval (95%) is 3 to 5")
    'The confidence interval (95%) is 3 to 5'
    """
    unlabelled = _ECHOED_LABEL.sub("", answer, count=1)
    stripped = _ECHOED_DIGEST.sub("", _ECHOED_CONFIDENCE.sub("", unlabelled)).strip()
    return stripped or answer.strip()


_FENCE = re.compile(r"^\s*(```|~~~)")
_DEBRIS = " \t\"'`*{}[],"


def clean_answer(answer: str) -> str:
    r"""The final answer only: the first line of text, without code fences, JSON debris or echoed decoration.

    An answer field is meant to hold a short answer; small models fill it with more (SmolLM2-135M wrote
    ``0.0}`` followed by a markdown essay with a code block). What precedes the first line break is
    kept, without the brackets, quotes and markdown emphasis around it, and without ``strip_echo``'s
    decoration. An answer that is nothing but debris is left as it is.

    >>> clean_answer('0.0}\n\nThis is how you can implement it.\n\n```python\nimport json\n```')
    '0.0'
    >>> clean_answer("```\n391\n```"), clean_answer("**C**"), clean_answer('"Paris",'), clean_answer("{ ")
    ('391', 'C', 'Paris', '{')
    >>> clean_answer("D (confidence 0.90)\\nstep 1: fish live near a shore")
    'D'
    """
    text = str(answer).replace("\\n", "\n")  # a line break written out as backslash-n
    lines = [line for line in text.splitlines() if line.strip() and not _FENCE.match(line)]
    first = lines[0] if lines else str(answer)
    cleaned = strip_echo(first.strip(_DEBRIS)).strip(_DEBRIS)
    return cleaned or str(answer).strip()


# The options of a multiple-choice question, as tasks write them: one "B) text" line each.
_OPTION_LINE = re.compile(r"^\s*([A-Z])\)\s+(.+?)\s*$", re.MULTILINE)


def _plain(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", text.casefold()).split())


def quoted_option(answer: str, question: str) -> str | None:
    r"""``"B) its text"`` when ``answer`` names the question's option B and no other, else None.

    Asked for a letter, small models sometimes answer with the option's text (8 of 150 round-0
    answers of the bench model on 50 arc_challenge questions; on the free-text format, 11 of 51
    `cot` answers, 2026-12-07), which no letter normalizer reads: the answer is then no vote at all.
    An answer names an option when it is the option's text with case, spacing, punctuation and
    markup ignored ("NaCl + H2O" for "NaCl + H_{2}O"); when it is a bare number and exactly one
    option starts with that number ("12" for "12.0 km/h^2"); or when it is a few words that all occur
    in exactly one option ("mode" for "the mode of the number of eggs"). Anything else is not guessed.

    >>> question = "Which is a metal?\n\nA) wood\nB) copper wire\nC) glass wire"
    >>> quoted_option("Copper wire.", question), quoted_option("B", question), quoted_option("copper", question)
    ('B) copper wire', None, 'B) copper wire')
    >>> quoted_option("wire", question) is None, quoted_option("12", "?\nA) 6.0 km/h^2\nB) 12.0 km/h^2")
    (True, 'B) 12.0 km/h^2')
    """
    options = _OPTION_LINE.findall(question)
    for names in (_same_text, _same_number, _words_within):
        named = [f"{letter}) {text}" for letter, text in options if names(answer, text)]
        if len(named) == 1:
            return named[0]
    return None


def _compact(text: str) -> str:
    return re.sub(r"[\W_]+", "", text.casefold())


def _same_text(answer: str, option: str) -> bool:
    return bool(_compact(answer)) and _compact(answer) == _compact(option)


_BARE_NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?|-?\.\d+")


def _same_number(answer: str, option: str) -> bool:
    """A bare number and the number the option starts with, equal as numbers."""
    said, starts = _BARE_NUMBER.fullmatch(answer.strip().rstrip(".")), _BARE_NUMBER.match(option.strip())
    return bool(said and starts) and float(said[0].replace(",", "")) == float(starts[0].replace(",", ""))


_FILLER = {"a", "an", "the", "of", "is", "it"}
MAX_NAMING_WORDS = 4


def _words_within(answer: str, option: str) -> bool:
    """At most ``MAX_NAMING_WORDS`` words (fillers aside), all of them words of the option."""
    words = set(_plain(answer).split()) - _FILLER
    return 0 < len(words) <= MAX_NAMING_WORDS and words <= set(_plain(option).split())


def read_answer(said: object, question: str, normalize: Callable[[str], str | None]) -> str:
    r"""An answer field as a debate counts it: ``clean_answer``, and an option's text that ``normalize`` cannot
    read is that option (``quoted_option``).

    >>> letters = {"A": "A", "B": "B"}.get  # a normalizer that reads a bare letter only
    >>> read_answer("Copper wire.", "Which?\nA) wood\nB) copper wire", letters), read_answer("**B**", "Which?", letters)
    ('B) copper wire', 'B')
    """
    answer = clean_answer(str(said or ""))
    if normalize(answer) is not None:
        return answer
    return quoted_option(answer, question) or answer


def closing_brace(text: str, opening: int) -> int | None:
    """Index of the brace that closes the one at `opening`, or None if it never closes."""
    depth = 0
    for index in range(opening, len(text)):
        depth += {"{": 1, "}": -1}.get(text[index], 0)
        if depth == 0:
            return index
    return None


def last_boxed(text: str) -> str | None:
    r"""Content of the last ``\boxed{...}`` in `text`, with nested braces balanced.

    >>> last_boxed(r"so $\boxed{1}$, no: $\boxed{\frac{1}{2}}$.")
    '\\frac{1}{2}'
    """
    start = text.rfind("\\boxed{")
    end = closing_brace(text, start + len("\\boxed")) if start >= 0 else None
    return None if end is None else text[start + len("\\boxed{") : end]


_ANSWER_MARKER = re.compile(r"(?:final\s+)?answer\s*(?:is|:)\s*:?\s*(.*)", re.IGNORECASE)
# lm-evaluation-harness's flexible extract for GSM8K: the last number-like token of the reply.
_NUMBER_TOKEN = re.compile(r"-?[$0-9.,]{2,}|-?[0-9]+")


def final_answer_in(reply: str) -> str:
    r"""The final answer a free-text reply gives: the last ``\boxed{}`` value; else what follows the last "answer is"
    or "Answer:" (its line); else the last number (lm-evaluation-harness's flexible extract); else the last line.

    >>> final_answer_in(r"3 * 4 = 12, minus 5 is 7. So $\boxed{7}$ pens.")
    '7'
    >>> final_answer_in("He pays 3 * $4 = $12.\nThe answer is (B) 12 dollars."), final_answer_in("12 - 5 = 7")
    ('(B) 12 dollars.', '7')
    >>> final_answer_in("**Final Answer:** 216"), final_answer_in("**Final Answer:**\n216\n\n**Confidence:**\n1.0")
    ('216', '216')
    >>> final_answer_in("Paris is the capital.\nParis"), final_answer_in("")
    ('Paris', '')
    """
    boxed = last_boxed(reply)
    if boxed is not None and boxed.strip():
        return boxed.strip()
    lines = [line.strip() for line in reply.splitlines() if line.strip()]
    marked = [_marked(m.group(1), lines[i + 1 :]) for i, line in enumerate(lines) if (m := _ANSWER_MARKER.search(line))]
    marked = [answer for answer in marked if answer]
    if marked:
        return marked[-1]
    numbers = _NUMBER_TOKEN.findall(reply)
    if numbers:
        return numbers[-1].strip(".,$") or numbers[-1]
    return lines[-1] if lines else ""


def _marked(rest: str, following: list[str]) -> str:
    """What an answer marker's line gives, markdown emphasis stripped; the next line when the marker ends its line."""
    rest = rest.strip(" *_")
    return rest or (following[0].strip(" *_") if following else "")


def format_tally(counts: dict[str, int]) -> str:
    """The vote count as the resolver reads it.

    >>> format_tally({"391": 2, "401": 1})
    '391: 2 votes; 401: 1 vote'
    """
    return "; ".join(f"{k}: {n} vote{'s' * (n != 1)}" for k, n in counts.items())


_TALLY_ENTRY = r"[^;]+?:\s*\d+\s+votes?"
_ECHOED_TALLY = re.compile(rf"^\s*{_TALLY_ENTRY}(?:\s*;\s*{_TALLY_ENTRY})*\s*;?\s*$", re.IGNORECASE)


def echoes_tally(answer: str) -> bool:
    """Whether ``answer`` is a copy of (part of) the tally rather than an answer.

    A small judge model sometimes returns the tally it was shown; a number normalizer
    would read "391: 2 votes" as 2.

    >>> echoes_tally("391: 2 votes; 401: 1 vote"), echoes_tally("C: 3 votes"), echoes_tally("391")
    (True, True, False)
    """
    return bool(_ECHOED_TALLY.match(answer))


def normalize_answer(answer: str | None) -> str | None:
    """Case- and punctuation-insensitive key; numbers in canonical form; None if empty."""
    if answer is None:
        return None
    text = " ".join(str(answer).split()).strip(_STRIP).casefold()
    if not text:
        return None
    return _as_number(text) or text
