"""Du et al.'s arithmetic task: expressions ``a+b*c+d-e*f`` with seeded two-digit numbers.

The value is computed from the generated integers, never by evaluating text.

>>> expression = generate(1, seed=0)[0]
>>> expression.value == expression.a + expression.b * expression.c + expression.d - expression.e * expression.f
True
"""

from __future__ import annotations

import random
from dataclasses import dataclass


@dataclass(frozen=True)
class Expression:
    """The expression ``a+b*c+d-e*f``.

    >>> Expression(1, 2, 3, 4, 5, 6).text, Expression(1, 2, 3, 4, 5, 6).value
    ('1+2*3+4-5*6', -19)
    """

    a: int
    b: int
    c: int
    d: int
    e: int
    f: int

    @property
    def text(self) -> str:
        return f"{self.a}+{self.b}*{self.c}+{self.d}-{self.e}*{self.f}"

    @property
    def value(self) -> int:
        return self.a + self.b * self.c + self.d - self.e * self.f


def generate(count: int, seed: int = 0, low: int = 10, high: int = 99) -> list[Expression]:
    """`count` expressions whose six numbers are drawn uniformly from [low, high] by ``random.Random(seed)``.

    Du et al. draw from 0-30; madspy uses two-digit numbers (10-99).

    >>> generate(3, seed=7) == generate(3, seed=7)
    True
    """
    rng = random.Random(seed)
    return [Expression(*(rng.randint(low, high) for _ in range(6))) for _ in range(count)]
