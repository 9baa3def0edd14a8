"""Errors madspy raises on bad input, each with a message a user can act on."""


class MadspyError(Exception):
    """Base class: the CLI prints these as one line and exits non-zero."""


class InputError(MadspyError, ValueError):
    """A question or option that cannot be run (empty, too long, out of range)."""


class ModelError(MadspyError, ValueError):
    """A model string madspy cannot route."""


class ProgramFileError(MadspyError, ValueError):
    """A saved program that is missing, malformed or incompatible."""
