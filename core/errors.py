"""Every error madspy raises, in two branches: what the caller can fix, and what a backend broke.

``InputError`` is the caller's fault (a question, option, file or request that cannot be run):
the CLI prints it as one line and exits 2, the server answers with its 4xx status.
``BackendError`` is a backend's fault (a data source, the transcript store, a debate that ran
out of time): the CLI exits 1, the server answers with its 5xx status. A model call that fails
inside a debate is not an exception at all: the debate goes on and says so in its status.

>>> issubclass(ConfigError, InputError), issubclass(StoreError, BackendError)
(True, True)
>>> UnknownProgram.http_status, StoreError.http_status, InputError.exit_code, BackendError.exit_code
(404, 500, 2, 1)
"""

from __future__ import annotations

from pydantic import ValidationError


class MadspyError(Exception):
    """Base class of every madspy error: a message a user can act on."""

    http_status = 500
    exit_code = 1


# -- the caller's fault: exit 2, HTTP 4xx -------------------------------------------


class InputError(MadspyError, ValueError):
    """A question, option, file or request that cannot be run as given (empty, too long, out of range)."""

    http_status = 400
    exit_code = 2


class ConfigError(InputError):
    """A setting out of its range or of the wrong kind; ``field`` is its dotted path (``critic.temperature``)."""

    def __init__(self, field: str, reason: str):
        super().__init__(f"{field}: {reason}")
        self.field, self.reason = field, reason

    @classmethod
    def of(cls, error: ValidationError) -> ConfigError:
        """The first problem pydantic found, with the field, the allowed values and what was given.

        >>> from pydantic import BaseModel, Field
        >>> class Settings(BaseModel):
        ...     max_tokens: int = Field(512, ge=16)
        >>> try:
        ...     Settings(max_tokens=8)
        ... except ValidationError as e:
        ...     ConfigError.of(e).reason
        'Input should be greater than or equal to 16 (got 8)'
        """
        first = error.errors()[0]
        field = ".".join(map(str, first["loc"])) or "config"
        given = first.get("input")
        shown = "" if isinstance(given, dict | list) or first["type"] == "missing" else f" (got {given!r})"
        return cls(field, f"{first['msg']}{shown}")


class ModelError(InputError):
    """A model string madspy cannot route (an unknown provider prefix)."""


class LocalModelError(ModelError):
    """A ``local/...`` model string that names no known alias and no existing GGUF file."""


class ProgramFileError(InputError):
    """A saved program that is missing, malformed, tampered with or written by an incompatible version."""


class TaskError(InputError):
    """An unknown task, option or split, or task files that are not where they were said to be."""


class EvalError(InputError):
    """An evaluation that cannot run, or rows that cannot be compared."""


class CompileError(InputError):
    """A compile that cannot or may not run (a bad option, more LM calls than allowed)."""


class SearchError(InputError):
    """A settings search that cannot run or has nothing to show yet."""


class PortError(InputError):
    """A port to another model that cannot run as asked."""


class ServeError(InputError):
    """A server that must not start as configured (no program, a public address without an API key)."""


class UnknownProgram(InputError):
    """A request naming a program this server does not serve."""

    http_status = 404


class ChatRequestError(InputError):
    """A chat-completions request madspy cannot answer, naming the request parameter at fault."""

    def __init__(self, message: str, param: str | None = None):
        super().__init__(message)
        self.param = param


# -- a backend's fault: exit 1, HTTP 5xx --------------------------------------------


class BackendError(MadspyError, RuntimeError):
    """A model, data source or store that failed while the request itself was fine."""

    http_status = 502
    exit_code = 1


class DataUnavailable(BackendError):
    """A task's data source (the Hugging Face Hub) that cannot be reached or read."""

    http_status = 503


class StoreError(BackendError):
    """A transcript database that cannot be opened or written."""

    http_status = 500


class DebateTimeout(BackendError):
    """A debate still running after the server's timeout; it goes on and is stored under ``tid``."""

    http_status = 504

    def __init__(self, timeout_s: float, tid: str):
        super().__init__(
            f"the debate took longer than {timeout_s:g}s; it goes on and will be stored as /v1/transcripts/{tid}"
        )
        self.tid = tid
