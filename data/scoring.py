"""Answer normalizers and scorers.

Every normalizer maps free model text to a canonical answer string, or to
``None`` when nothing parses. Gold labels go through the same normalizer when a
task is loaded, so scoring an exact-answer task is string equality, and a
prediction that does not parse scores 0.

>>> normalize_number("So she earns $1,234.")
'1234'
>>> normalize_choice("The answer is (b).")
'B'
>>> exact_score(normalize_yesno("Yes, because..."), "yes")
1.0
"""

from __future__ import annotations

import re
import string
from collections.abc import Sequence
from decimal import Decimal
from fractions import Fraction

from madspy.programs.answers import closing_brace, last_boxed

# An optional minus, digits with strict thousands groups or plain digits, an
# optional decimal part, and an optional "/denominator" for fractions like 3/4.
_NUMBER = re.compile(r"-?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:\s*/\s*\d+)?")


def _to_fraction(token: str) -> Fraction | None:
    """Exact value of one `_NUMBER` token; None for a zero denominator."""
    numerator, _, denominator = token.replace(",", "").replace(" ", "").partition("/")
    if denominator and int(denominator) == 0:
        return None
    return Fraction(numerator) / (Fraction(denominator) if denominator else 1)


def format_number(value: Fraction) -> str:
    """Canonical text for an exact number: '42', '0.75', or '1/3' when it does not terminate.

    >>> format_number(Fraction(5, 1)), format_number(Fraction(3, 4)), format_number(Fraction(-1, 3))
    ('5', '0.75', '-1/3')
    """
    if value.denominator == 1:
        return str(value.numerator)
    denominator = value.denominator
    for factor in (2, 5):
        while denominator % factor == 0:
            denominator //= factor
    if denominator != 1:
        return str(value)
    return format(Decimal(value.numerator) / Decimal(value.denominator), "f")


def normalize_number(text: str | None) -> str | None:
    """The last number in `text`, canonicalized ("1,234" -> "1234", "5.0" -> "5", "3/4" -> "0.75").

    >>> normalize_number("It costs $5.00 in total.")
    '5'
    >>> normalize_number("no digits here") is None
    True
    """
    if not text:
        return None
    tokens = _NUMBER.findall(text)
    value = _to_fraction(tokens[-1]) if tokens else None
    return None if value is None else format_number(value)


def _after_answer_marker(text: str) -> str:
    """The text after the last 'answer', 'answer:' or 'answer is', else the text itself."""
    cut = text.lower().rfind("answer")
    if cut < 0:
        return text
    rest = text[cut + len("answer") :].lstrip(" :")
    return rest[3:] if rest.lower().startswith("is ") else rest


_SINGLE_LETTER = re.compile(r"\(?([A-Za-z])\)?[.:]?")
_LEADING_LETTER = re.compile(r"\(([A-Za-z])\)|([A-Za-z])[).:]+[\s,]|([A-Z])\s+\(")


def normalize_choice(text: str | None) -> str | None:
    """An option letter in upper case from "B", "(b)", "B) Paris", "Answer: B" or "The answer is (B).".

    >>> [normalize_choice(t) for t in ["b", "(B)", "B) Paris", "Answer: B", "maybe"]]
    ['B', 'B', 'B', 'B', None]
    >>> [normalize_choice(t) for t in ["A). No control group.", "A), mass.", "A (electrical energy)", "A or B"]]
    ['A', 'A', 'A', None]
    """
    if not text:
        return None
    for candidate in (_after_answer_marker(text), text):
        candidate = candidate.strip().strip("*`'\" ")
        match = _SINGLE_LETTER.fullmatch(candidate) or _LEADING_LETTER.match(candidate)
        if match:
            return next(group for group in match.groups() if group).upper()
    return None


_YES = {"yes": "yes", "true": "yes", "no": "no", "false": "no"}


def normalize_yesno(text: str | None) -> str | None:
    """'yes' or 'no' from the first word (yes/true/no/false), after any 'Answer:' marker.

    >>> normalize_yesno("True."), normalize_yesno("Answer: no"), normalize_yesno("Perhaps")
    ('yes', 'no', None)
    """
    if not text:
        return None
    words = _after_answer_marker(text).split()
    return _YES.get(words[0].strip(string.punctuation).lower()) if words else None


_ARTICLES = {"a", "an", "the"}


def normalize_text(text: str | None) -> str | None:
    """SQuAD-style: lower case, no punctuation, no articles, single spaces.

    >>> normalize_text("  The Eiffel   Tower! ")
    'eiffel tower'
    """
    if not text:
        return None
    words = text.lower().translate(str.maketrans("", "", string.punctuation)).split()
    return " ".join(word for word in words if word not in _ARTICLES) or None


def normalize_exact(text: str | None) -> str | None:
    """Lower case with single spaces, punctuation kept (for answers like ') ] >').

    >>> normalize_exact(" ) ]  > ")
    ') ] >'
    """
    if not text:
        return None
    return " ".join(text.lower().split()) or None


def normalize_translation(text: str | None) -> str | None:
    """The translation with surrounding whitespace removed.

    >>> normalize_translation("  The goods cost less than 20 euros. ")
    'The goods cost less than 20 euros.'
    """
    stripped = text.strip() if text else ""
    return stripped or None


_UNIT_WRAPPER = re.compile(r"\\(?:text|mbox)\{")


def _drop_text_units(latex: str) -> str:
    r"""Unwrap a ``\text{...}`` (or ``\mbox``) that is the whole answer; drop units elsewhere.

    >>> _drop_text_units(r"\text{Evelyn}"), _drop_text_units(r"15\mbox{ cm}^2")
    ('Evelyn', '15')
    """
    while match := _UNIT_WRAPPER.search(latex):
        end = closing_brace(latex, match.end() - 1)
        if end is None:
            return latex
        rest = latex[end + 1 :]
        if match.start() == 0 and not rest:
            return latex[match.end() : end]
        if rest[:1] == "^" and rest[1:2].isdigit():  # a squared or cubed unit
            rest = rest[2:]
        latex = latex[: match.start()] + rest
    return latex


_LATEX_DROPS = ("\\left", "\\right", "\\!", "\\,", "\\;", "\\$", "$", "^\\circ", "^{\\circ}", "\\%", "%")
_LATEX_FRAC = re.compile(r"-?\\frac\{(\d+)\}\{(\d+)\}")


def normalize_latex(text: str | None) -> str | None:
    r"""A comparable form of a LaTeX answer (the last ``\boxed{}`` if there is one).

    Removes spaces, ``\left``/``\right``, ``\!``, ``$``, degree signs, ``\%``, a
    trailing '.', ``\text{}`` units and a leading 'x='; maps ``dfrac``/``tfrac``
    to ``frac``, ``\sqrt2`` to ``\sqrt{2}`` and ``\frac43`` to ``\frac{4}{3}``.
    Plain numbers, 'a/b' and ``\frac{a}{b}`` with integers become canonical
    numbers, so '0.5' equals ``\frac{1}{2}``.

    >>> normalize_latex(r"The answer is $\boxed{\dfrac{1}{2}}$.")
    '0.5'
    >>> normalize_latex(r"\left( 3, \frac{\pi}{2} \right)")
    '(3,\\frac{\\pi}{2})'
    """
    if not text:
        return None
    latex = last_boxed(text) or text
    latex = _drop_text_units(latex.strip())
    for token in _LATEX_DROPS:
        latex = latex.replace(token, "")
    latex = latex.replace("dfrac", "frac").replace("tfrac", "frac")
    latex = "".join(latex.split()).rstrip(".")
    latex = re.sub(r"\\sqrt(\w)", r"\\sqrt{\1}", latex)  # \sqrt2 -> \sqrt{2}
    latex = re.sub(r"\\frac(\d)", r"\\frac{\1}", latex)  # \frac43 -> \frac{4}3
    latex = re.sub(r"(\\frac\{[^{}]*\})(\d)", r"\1{\2}", latex)  # \frac{4}3 -> \frac{4}{3}
    lhs, equals, rhs = latex.partition("=")
    if equals and len(lhs) == 1 and lhs.isalpha() and "=" not in rhs:
        latex = rhs
    if (frac := _LATEX_FRAC.fullmatch(latex)) and int(frac[2]) != 0:
        sign = -1 if latex.startswith("-") else 1
        return format_number(sign * Fraction(int(frac[1]), int(frac[2])))
    if _NUMBER.fullmatch(latex) and (value := _to_fraction(latex)) is not None:
        return format_number(value)
    return latex or None


def exact_score(prediction: str | None, gold: str) -> float:
    """1.0 when a normalized prediction equals the normalized gold, else 0.0 (None scores 0).

    >>> exact_score("B", "B"), exact_score(None, "B")
    (1.0, 0.0)
    """
    return float(prediction is not None and prediction == gold)


def chrf_score(prediction: str | None, gold: str) -> float:
    """Sentence chrF against one reference, scaled to [0, 1]; an empty prediction scores 0.

    >>> chrf_score("The goods cost less than 20 euros.", "The goods cost less than 20 euros.")
    1.0
    """
    import sacrebleu

    if not prediction:
        return 0.0
    return sacrebleu.sentence_chrf(prediction, [gold]).score / 100


def corpus_translation_scores(
    predictions: Sequence[str],
    references: Sequence[str | Sequence[str]],
    *,
    target_lang: str = "en",
) -> dict[str, float]:
    """Corpus BLEU and chrF (0-100, sacrebleu) over predictions with one or more references each.

    Every prediction must have the same number of references. Chinese targets
    use sacrebleu's "zh" BLEU tokenizer.

    >>> scores = corpus_translation_scores(["a cat sat on the mat"], [["a cat sat on the mat"]])
    >>> {name: round(value, 1) for name, value in scores.items()}
    {'bleu': 100.0, 'chrf': 100.0}
    """
    import sacrebleu

    rows = [[ref] if isinstance(ref, str) else list(ref) for ref in references]
    if len(rows) != len(predictions) or len({len(row) for row in rows}) > 1:
        raise ValueError("need one reference list per prediction, all of the same length")
    streams = [list(stream) for stream in zip(*rows, strict=True)]
    hypotheses = [prediction or "" for prediction in predictions]
    tokenize = "zh" if target_lang == "zh" else "13a"
    return {
        "bleu": sacrebleu.corpus_bleu(hypotheses, streams, tokenize=tokenize).score,
        "chrf": sacrebleu.corpus_chrf(hypotheses, streams).score,
    }
