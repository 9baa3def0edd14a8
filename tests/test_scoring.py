"""Answer normalizers and scorers, on hand-written cases."""

from fractions import Fraction

import pytest

from madspy.data.scoring import (
    chrf_score,
    corpus_translation_scores,
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


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("18", "18"),
        ("1,234", "1234"),
        ("$5", "5"),
        ("5.0", "5"),
        ("-3", "-3"),
        ("The answer is 42.", "42"),
        ("She had 3 apples, then 5, so 8 in total.", "8"),  # the last number wins
        ("3/4", "0.75"),
        ("1/3", "1/3"),  # a non-terminating value stays an exact fraction
        ("It costs $1,234.50", "1234.5"),
        ("1, 2, 3", "3"),  # commas not in thousands groups separate numbers
    ],
)
def test_normalize_number(text, expected):
    assert normalize_number(text) == expected


@pytest.mark.parametrize("text", [None, "", "no digits", "1/0"])
def test_normalize_number_unparsable(text):
    assert normalize_number(text) is None


def test_format_number():
    assert format_number(Fraction(10, 2)) == "5"
    assert format_number(Fraction(-5, 4)) == "-1.25"
    assert format_number(Fraction(2, 3)) == "2/3"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("B", "B"),
        ("b", "B"),
        ("(B)", "B"),
        ("B)", "B"),
        ("B.", "B"),
        ("B) Paris", "B"),
        ("(b) Paris", "B"),
        ("Answer: B", "B"),
        ("The answer is (C).", "C"),
        ("Final answer: **D**", "D"),
        ("The answer is B, because Paris is the capital.", None),
        ("A cat", None),
        ("maybe", None),
        ("", None),
        (None, None),
    ],
)
def test_normalize_choice(text, expected):
    assert normalize_choice(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("yes", "yes"),
        ("Yes, because frost forms in December.", "yes"),
        ("TRUE", "yes"),
        ("no.", "no"),
        ("False", "no"),
        ("Answer: no", "no"),
        ("Probably yes", None),
        ("", None),
    ],
)
def test_normalize_yesno(text, expected):
    assert normalize_yesno(text) == expected


def test_normalize_text_is_squad_style():
    assert normalize_text("  The  Eiffel Tower! ") == "eiffel tower"
    assert normalize_text("An apple, a pear.") == "apple pear"
    assert normalize_text("the ...") is None


def test_normalize_exact_keeps_punctuation():
    assert normalize_exact(" ) ]\n> ") == ") ] >"
    assert normalize_exact("  ") is None


def test_normalize_translation_strips():
    assert normalize_translation("  Hallo Welt.\n") == "Hallo Welt."
    assert normalize_translation(" ") is None


def test_last_boxed_balances_nested_braces():
    solution = r"First $\boxed{1}$; finally $\boxed{\frac{1}{\sqrt{2}}}$ is it."
    assert last_boxed(solution) == r"\frac{1}{\sqrt{2}}"
    assert last_boxed(r"\boxed{\left( 3, \frac{\pi}{2} \right)}.") == r"\left( 3, \frac{\pi}{2} \right)"
    assert last_boxed("no box") is None
    assert last_boxed(r"\boxed{unclosed") is None


@pytest.mark.parametrize(
    ("prediction", "gold"),
    [
        (r"\dfrac{1}{2}", r"\frac{1}{2}"),
        ("0.5", r"\frac{1}{2}"),
        ("14/3", r"\frac{14}{3}"),
        (r"\frac43", r"\frac{4}{3}"),
        (r"\left( 3, \frac{\pi}{2} \right)", r"(3,\frac{\pi}{2})"),
        (r"90^\circ", "90"),
        (r"5\text{ cm}", "5"),
        (r"15\mbox{ cm}^2", "15"),
        (r"\text{Evelyn}", "Evelyn"),
        ("x = 5", "5"),
        (r"10\%", "10"),
        (r"\$18.90", "18.9"),
        ("2220.", "2220"),
        (r"11\sqrt2", r"11\sqrt{2}"),
        (r"3\!\cdot\!4", r"3\cdot4"),
        (r"The answer is $\boxed{\frac{3}{56}}$.", r"\frac{3}{56}"),
    ],
)
def test_normalize_latex_equivalences(prediction, gold):
    assert normalize_latex(prediction) == normalize_latex(gold)


def test_normalize_latex_distinguishes_different_answers():
    assert normalize_latex(r"\frac{1}{3}") != normalize_latex("0.33")
    assert normalize_latex("p-q") != normalize_latex("q-p")
    assert normalize_latex("") is None


def test_exact_score_and_unparsable_prediction():
    assert exact_score("B", "B") == 1.0
    assert exact_score("C", "B") == 0.0
    assert exact_score(None, "B") == 0.0
    # An unparsable prediction is None after normalizing, and never matches.
    assert exact_score(normalize_number("no idea"), "18") == 0.0


def test_chrf_score():
    assert chrf_score("The goods cost less.", "The goods cost less.") == 1.0
    assert chrf_score(None, "The goods cost less.") == 0.0
    assert chrf_score("", "The goods cost less.") == 0.0
    assert 0.0 < chrf_score("The goods cost more.", "The goods cost less.") < 1.0


def test_corpus_translation_scores():
    perfect = corpus_translation_scores(["a cat sat on the mat"], ["a cat sat on the mat"])
    assert perfect["bleu"] == pytest.approx(100.0)
    assert perfect["chrf"] == pytest.approx(100.0)
    # Two references per prediction: matching either one is perfect.
    references = [["a dog is barking", "the dog barks at night"]]
    two = corpus_translation_scores(["the dog barks at night"], references)
    assert two["bleu"] == pytest.approx(100.0)
    with pytest.raises(ValueError):
        corpus_translation_scores(["x", "y"], [["a"], ["b", "c"]])
