"""The base of madspy's named vocabularies (roles, statuses, stop reasons, event kinds).

Each vocabulary is spelled once, as an enum beside the code that owns it; its members are
plain strings too, so they compare, hash, format and serialize as their values.

>>> class Color(Vocabulary):
...     RED = "red"
>>> Color.RED == "red", f"{Color.RED}", Color("red") is Color.RED
(True, 'red', True)
"""

from __future__ import annotations

from enum import Enum


class Vocabulary(str, Enum):
    """A closed set of names whose members behave as their string values."""

    def __str__(self) -> str:
        return str(self.value)

    def __format__(self, spec: str) -> str:
        return format(str(self.value), spec)
