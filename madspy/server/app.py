"""Serve debate programs over HTTP: FastAPI app factory, limits, metrics and a uvicorn runner.

Endpoints: ``POST /v1/debate`` (``?stream=true`` or ``POST /v1/debate/stream`` for
server-sent events, one per finished round), ``GET /v1/transcripts/{id}``,
``POST /v1/chat/completions`` and ``GET /v1/models`` (the OpenAI API: see
``madspy.server.openai_api``), ``GET /healthz``, ``GET /metrics`` (Prometheus text) and the
OpenAPI docs at ``/docs``. With ``MADSPY_API_KEY`` set every ``/v1`` route and
``/metrics`` needs ``Authorization: Bearer <key>``; without it the server only binds
to loopback.

A server holds one or more programs by name: a chat request's ``model`` names one, a
``/v1/debate`` request's ``program`` (default: the first).

Limits: bodies over ``max_body`` bytes get 413; when ``max_concurrent`` debates
run, a new one gets 429 at once; a debate slower than ``timeout_s`` gets 504. Every
debate runs with a time budget of at most ``timeout_s`` (a request may ask for
less with ``budget_s`` and gets its answer with status ``time_exhausted``), so a
timed-out debate starts no new step: the calls in flight finish, it is stored
under the ``transcript_id`` the 504 names, and its slot frees. madspy's own routes
answer errors as ``{"error": "<message>"}``, the OpenAI routes (and unknown ``/v1``
paths) in OpenAI's shape ``{"error": {"message", "type", "param", "code"}}``.

Example::

    from fastapi.testclient import TestClient
    from madspy.server.app import ServeSettings, create_app
    app = create_app({"arith": "compiled/x.json"}, ServeSettings(store="transcripts.sqlite3"))
    TestClient(app).post("/v1/debate", json={"question": "What is 17 * 23?"}).json()["answer"]
    TestClient(app).post("/v1/chat/completions", json={"model": "arith", "messages": [
        {"role": "user", "content": "What is 17 * 23?"}]}).json()["choices"][0]["message"]["content"]
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import ipaddress
import json
import os
import threading
import time
from collections.abc import AsyncIterator, Callable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import aclosing, asynccontextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

import dspy
from fastapi import Depends, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, PlainTextResponse, StreamingResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from starlette.exceptions import HTTPException

from madspy.core.errors import DebateTimeout, MadspyError, ServeError, UnknownProgram
from madspy.core.models import check_question
from madspy.programs.artifact import load_program
from madspy.programs.debate import Debate
from madspy.programs.protocols import TaskKind
from madspy.programs.transcript import Round, Status, StopReason
from madspy.server import openai_api
from madspy.server.metrics import Metrics
from madspy.server.store import TranscriptStore, new_id

API_KEY_ENV = "MADSPY_API_KEY"
FASTAPI_UNPARSABLE_BODY = "There was an error parsing the body"  # FastAPI's detail when it cannot decode a body


@dataclass(frozen=True)
class ServeSettings:
    """How the server runs; ``api_key`` defaults to the ``MADSPY_API_KEY`` environment variable."""

    host: str = "127.0.0.1"
    port: int = 8000
    # transcripts: a SQLite file, or a database URL that several replicas share (postgresql://user@host/db)
    store: str | Path = "transcripts.sqlite3"
    max_concurrent: int = 4
    timeout_s: float = 120.0
    max_body: int = 65536
    budget_tokens: int | None = None  # ceiling on a request's token budget (None: no ceiling)
    model: str | None = None  # every program loaded from a file runs on this model instead of its own
    api_base: str | None = None  # ... reached at this server URL (vLLM, Ollama, llama.cpp's server)
    # How the programs' calls run, which a program file never decides (``config.CALLER_FIELDS``); None: the default.
    lm_timeout_s: float | None = None  # seconds per LM call
    num_retries: int | None = None  # LiteLLM retries per call
    cache: bool | None = None  # DSPy's reply cache
    concurrency: int | None = None  # LM calls in flight within one debate
    credit_ledger: str | None = None  # the credit protocol's ledger file
    api_key: str | None = field(default_factory=lambda: os.environ.get(API_KEY_ENV) or None)


def check_bind(host: str, api_key: str | None) -> None:
    """Refuse to listen beyond loopback without an API key."""
    if api_key:
        return
    try:
        loopback = host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = False
    if not loopback:
        raise ServeError(f"refusing to serve on {host} without an API key: set {API_KEY_ENV} or listen on 127.0.0.1")


# -- API models ------------------------------------------------------------------


class DebateOptions(BaseModel):
    """Per-request changes to a program's config (``/v1/debate``'s fields; a chat request's extra parameters)."""

    model_config = ConfigDict(extra="forbid")
    budget_tokens: int | None = Field(None, ge=1, description="hard token budget for this debate")
    budget_s: float | None = Field(None, gt=0, description="seconds for this debate; no step starts after them")
    rounds: int | None = Field(None, ge=1, le=20, description="rounds in all, round 0 included")
    protocol: Literal["majority", "judge"] | None = None
    task_kind: TaskKind | None = Field(
        None, description="reasoning, knowledge or open_ended: picks the protocol of a program whose protocol is auto"
    )


class DebateRequest(DebateOptions):
    """One question for one served program, with optional changes to its config."""

    question: str
    program: str | None = Field(None, description="which served program debates (default: the first)")


class DebateResponse(BaseModel):
    """A debate's outcome; the full transcript is at ``/v1/transcripts/{transcript_id}``."""

    answer: str | None
    confidence: float
    status: Status
    stop_reason: StopReason
    usage: dict[str, int]
    transcript_id: str


# -- the debate behind a request -------------------------------------------------


# -- ASGI middleware -------------------------------------------------------------


async def _send_json(send: Callable, status: int, body: dict[str, Any]) -> None:
    data = json.dumps(body).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": data})


class _Limits:
    """Count every request by status and latency; answer 413 to bodies over ``max_body`` bytes."""

    def __init__(self, app: Callable, max_body: int, metrics: Metrics):
        self.app, self.max_body, self.metrics = app, max_body, metrics

    async def __call__(self, scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        started, status = time.perf_counter(), 500

        async def counted_send(message: dict) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            body = await self._body(scope, receive)
            if body is None:
                body = _error_body(scope["path"], 413, f"request body over {self.max_body} bytes")
                return await _send_json(counted_send, 413, body)
            replay = [{"type": "http.request", "body": body, "more_body": False}]

            async def replayed() -> dict:  # the body once, then the client's own messages (disconnects)
                return replay.pop() if replay else await receive()

            await self.app(scope, replayed, counted_send)
        finally:
            self.metrics.request(status, time.perf_counter() - started)

    async def _body(self, scope: dict, receive: Callable) -> bytes | None:
        """The whole body, or None once it is over the limit (declared or streamed)."""
        declared = dict(scope["headers"]).get(b"content-length")
        if declared and declared.isdigit() and int(declared) > self.max_body:
            return None
        chunks, size, more = [], 0, True
        while more:
            message = await receive()
            if message["type"] != "http.request":
                break
            chunks.append(message.get("body", b""))
            size += len(chunks[-1])
            if size > self.max_body:
                return None
            more = message.get("more_body", False)
        return b"".join(chunks)


# -- errors ----------------------------------------------------------------------

MADSPY_ROUTES = ("/v1/debate", "/v1/transcripts/")  # madspy's own /v1 routes, with madspy's error shape


def _openai_style(path: str) -> bool:
    """Whether errors on ``path`` take OpenAI's shape: the OpenAI routes and /v1 paths madspy does not serve."""
    return path.startswith("/v1/") and not path.startswith(MADSPY_ROUTES)


def _error_body(
    path: str, status: int, message: str, param: str | None = None, code: str | None = None, **extra: Any
) -> dict[str, Any]:
    if _openai_style(path):
        return openai_api.error_body(status, message, param, code, **extra)
    return {"error": message, **extra}


def _error(
    request: Request, status: int, message: str, *, headers: dict[str, str] | None = None, **fields: Any
) -> JSONResponse:
    return JSONResponse(_error_body(request.url.path, status, message, **fields), status_code=status, headers=headers)


def _validation_message(errors: list[dict[str, Any]]) -> tuple[str, str | None]:
    """A one-line message and the request field at fault."""
    first = errors[0]
    if first.get("type") == "json_invalid":
        return "the request body is not valid JSON", None
    if tuple(first.get("loc", ())) == ("body",) and isinstance(first.get("input"), bytes):  # curl -d's form type
        return "the request body must be JSON, sent with Content-Type: application/json", None
    where = ".".join(str(p) for p in first.get("loc", ()) if p != "body")
    return f"invalid request: {where or 'body'}: {first.get('msg')}", where or None


# -- the app ---------------------------------------------------------------------


@dataclass
class _Running:
    """A debate started for a request: its transcript id, its result to come and, when streamed, its rounds."""

    tid: str
    future: Future
    rounds: asyncio.Queue | None


class _Service:
    """Per-app state: the programs by name, store, slots, worker threads and metrics."""

    def __init__(self, programs: dict[str, Debate], settings: ServeSettings):
        self.programs, self.settings = programs, settings
        self.store = TranscriptStore(settings.store)
        self.slots = threading.BoundedSemaphore(settings.max_concurrent)
        self.pool = ThreadPoolExecutor(max_workers=settings.max_concurrent, thread_name_prefix="debate")
        self.metrics = Metrics()

    def program(self, name: str | None) -> Debate:
        """The program served as ``name`` (None: the first); raises UnknownProgram (404)."""
        if name is None:
            return next(iter(self.programs.values()))
        if name not in self.programs:
            raise UnknownProgram(f"no program {name!r}; this server serves {', '.join(self.programs)}")
        return self.programs[name]

    def prepare(self, req: DebateRequest) -> tuple[Debate, str]:
        """The per-request debate and checked question; raises InputError (400) on bad input."""
        base = self.program(req.program)
        asked = {"rounds": req.rounds, "protocol": req.protocol, "task_kind": req.task_kind}
        changes = {k: v for k, v in asked.items() if v is not None}
        ceiling = self.settings.budget_tokens
        budget = min(filter(None, (req.budget_tokens, ceiling)), default=None)
        if budget is not None:
            changes["budget_tokens"] = budget
        changes["budget_s"] = min(filter(None, (req.budget_s, base.config.budget_s, self.settings.timeout_s)))
        debate = base.fork(**changes)  # a setting out of range is a ConfigError: 400, naming the field
        question = req.question
        for model in debate.config.models():
            question = check_question(question, model, debate.config.max_tokens)
        return debate, question

    def launch(self, req: DebateRequest, stream: bool) -> _Running:
        """Start the debate ``req`` asks for in a worker thread, holding a slot.

        Raises InputError (400) or UnknownProgram (404) on a bad request, HTTPException 429 when no slot is free.
        """
        debate, question = self.prepare(req)
        if not self.slots.acquire(blocking=False):
            raise HTTPException(
                429,
                f"all {self.settings.max_concurrent} debate slots are busy; retry later",
                headers={"Retry-After": "1"},
            )
        self.metrics.running(+1)
        tid, rounds = new_id(), asyncio.Queue() if stream else None
        on_round = self._forward_rounds(rounds) if rounds is not None else None

        def work() -> dspy.Prediction:
            try:
                result = debate(question=question, on_round=on_round)
                self.store.put(result.transcript, tid)
                self.metrics.debate(result)
                return result
            finally:
                self.metrics.running(-1)
                self.slots.release()

        return _Running(tid, self.pool.submit(work), rounds)

    @staticmethod
    def _forward_rounds(rounds: asyncio.Queue) -> Callable[[Round], None]:
        loop = asyncio.get_running_loop()

        def on_round(rnd: Round) -> None:  # called in the worker thread
            data = rnd.model_dump(mode="json")
            with contextlib.suppress(RuntimeError):  # the event loop is gone (server stopping): nobody listens
                loop.call_soon_threadsafe(rounds.put_nowait, data)

        return on_round

    async def outcome(self, run: _Running) -> dspy.Prediction:
        """The debate's result; DebateTimeout after ``timeout_s`` (the debate goes on: it is never cancelled)."""
        try:
            return await asyncio.wait_for(asyncio.shield(asyncio.wrap_future(run.future)), self.settings.timeout_s)
        except asyncio.TimeoutError:
            raise DebateTimeout(self.settings.timeout_s, run.tid) from None

    async def progress(self, run: _Running) -> AsyncIterator[tuple[str, Any]]:
        """``("round", round as JSON data)`` per finished round, then ``("result", prediction)``.

        Raises DebateTimeout after ``timeout_s``. A client that leaves mid-stream stops only the
        events: the debate finishes and is stored.
        """
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.settings.timeout_s
        finished = asyncio.wrap_future(run.future)  # never cancelled: that would cancel the debate's slot
        getter: asyncio.Future | None = None
        try:
            while not finished.done() or not run.rounds.empty():
                getter = getter or asyncio.ensure_future(run.rounds.get())
                done, _ = await asyncio.wait(
                    {getter, finished}, timeout=max(deadline - loop.time(), 0), return_when=asyncio.FIRST_COMPLETED
                )
                if not done:
                    raise DebateTimeout(self.settings.timeout_s, run.tid)
                if getter in done:
                    yield "round", getter.result()
                    getter = None
            yield "result", finished.result()
        finally:
            if getter is not None:
                getter.cancel()


def _sse(event: str, data: dict[str, Any]) -> str:
    return f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n"


def _response(result: dspy.Prediction, tid: str) -> DebateResponse:
    return DebateResponse(
        answer=result.answer,
        confidence=result.confidence,
        status=result.status,
        stop_reason=result.stop_reason,
        usage=result.usage,
        transcript_id=tid,
    )


async def _debate_events(service: _Service, run: _Running) -> AsyncIterator[str]:
    """``/v1/debate``'s server-sent events: ``round`` per finished round, then ``result`` (or ``error``)."""
    try:
        async with aclosing(service.progress(run)) as events:
            async for kind, data in events:
                yield _sse(kind, data if kind == "round" else _response(data, run.tid).model_dump())
    except Exception as e:  # the stream is open: errors become events, not statuses
        extra = {"transcript_id": e.tid} if isinstance(e, DebateTimeout) else {}
        yield _sse("error", {"error": str(e) if isinstance(e, MadspyError) else "internal error", **extra})


# -- the OpenAI chat-completions route ----------------------------------------------


def _account(result: dspy.Prediction, tid: str) -> str:
    """A debate in one sentence: the ``reasoning`` a DSPy ChainOfThought caller receives."""
    t = result.transcript
    protocol = t.decision.protocol if t.decision else "no protocol"
    return (
        f"A debate of {len(t.config.get('agents', []))} agents over {len(t.rounds)} rounds decided "
        f"{result.answer!r} by {protocol} with confidence {result.confidence:.2f}: status {result.status}, "
        f"stopped by {result.stop_reason}. Transcript: /v1/transcripts/{tid}"
    )


def _chat_extra(result: dspy.Prediction, tid: str) -> dict[str, Any]:
    """The ``madspy`` field of a chat reply: answer, confidence, status, stop reason, transcript id."""
    return _response(result, tid).model_dump(exclude={"usage"})


async def _chat_chunks(
    service: _Service, run: _Running, model: str, ask: openai_api.Ask, include_usage: bool
) -> AsyncIterator[str]:
    """The chat stream: role, a content-less chunk per round, the answer, the finish, usage if asked, [DONE]."""
    yield openai_api.chunk(run.tid, model, {"role": "assistant", "content": ""})
    try:
        async with aclosing(service.progress(run)) as events:
            async for kind, data in events:
                if kind == "round":
                    yield openai_api.chunk(run.tid, model, {"content": ""}, madspy={"round": data})
                else:
                    result = data
    except Exception as e:  # the stream is open: errors become data lines, as OpenAI streams them
        if isinstance(e, DebateTimeout):
            body = openai_api.error_body(504, str(e), transcript_id=e.tid)
        else:
            body = openai_api.error_body(500, str(e) if isinstance(e, MadspyError) else "internal error")
        yield openai_api.data_line(body)
        return
    content = openai_api.reply_content(ask, result.answer, _account(result, run.tid))
    if content is not None:
        yield openai_api.chunk(run.tid, model, {"content": content})
    yield openai_api.chunk(run.tid, model, {}, "stop", madspy=_chat_extra(result, run.tid))
    if include_usage:
        yield openai_api.chunk(run.tid, model, None, usage=openai_api.usage(result.usage))
    yield openai_api.data_line("[DONE]")


def _created(program: Debate, default: int) -> int:
    """When a program was saved (its manifest's ``created``), as Unix seconds."""
    try:
        return int(datetime.fromisoformat(program.manifest["created"]).timestamp())
    except (KeyError, TypeError, ValueError):
        return default


# -- the app factory ----------------------------------------------------------------

ProgramSource = str | Path | Debate


def name_programs(programs: ProgramSource | Mapping[str, ProgramSource]) -> dict[str, ProgramSource]:
    """Programs by the name clients call them: a mapping as given, one path by its file stem, a Debate ``debate``.

    >>> name_programs("compiled/arithmetic-smollm2.json")
    {'arithmetic-smollm2': 'compiled/arithmetic-smollm2.json'}
    """
    if isinstance(programs, Mapping):
        named = dict(programs)
    else:
        named = {"debate" if isinstance(programs, Debate) else Path(programs).stem: programs}
    if not named:
        raise ServeError("no program to serve")
    return named


def create_app(programs: ProgramSource | Mapping[str, ProgramSource], settings: ServeSettings | None = None) -> FastAPI:
    """A FastAPI app serving ``programs``: saved program paths or ``Debate`` objects (forked per request).

    Name several with a mapping; a single path is named after its file stem.

    Example::

        app = create_app({"arith": "compiled/x.json", "gsm8k": "compiled/y.json"}, ServeSettings(timeout_s=60))
    """
    settings = settings or ServeSettings()
    caller = {
        "model": settings.model,
        "api_base": settings.api_base,
        "timeout_s": settings.lm_timeout_s,
        "num_retries": settings.num_retries,
        "cache": settings.cache,
        "concurrency": settings.concurrency,
        "credit_ledger": settings.credit_ledger,
    }
    overrides = {k: v for k, v in caller.items() if v is not None}
    loaded = {
        name: p if isinstance(p, Debate) else load_program(p, **overrides)
        for name, p in name_programs(programs).items()
    }
    service = _Service(loaded, settings)
    started = int(time.time())
    bearer = HTTPBearer(auto_error=False)

    def authorized(credentials: HTTPAuthorizationCredentials | None = Depends(bearer)) -> None:
        key = settings.api_key
        if key is None:
            return
        given = credentials.credentials if credentials else ""
        if not hmac.compare_digest(given.encode(), key.encode()):
            raise HTTPException(
                401,
                "missing or wrong API key: send Authorization: Bearer <key>",
                headers={"WWW-Authenticate": "Bearer"},
            )

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        yield
        service.pool.shutdown(wait=True)  # running debates finish and are stored
        service.store.close()

    app = FastAPI(title="madspy", summary="Multi-agent debate as a service", lifespan=lifespan)
    app.state.service = service
    app.add_middleware(_Limits, max_body=settings.max_body, metrics=service.metrics)

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, e: HTTPException) -> JSONResponse:
        detail = str(e.detail)
        if e.status_code == 400 and detail == FASTAPI_UNPARSABLE_BODY:  # e.g. bytes that are not UTF-8
            detail = "the request body is not valid JSON (it must be UTF-8 text)"
        return _error(request, e.status_code, detail, headers=e.headers)

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, e: RequestValidationError) -> JSONResponse:
        message, where = _validation_message(list(e.errors()))
        if _openai_style(request.url.path):
            return _error(request, 400, message, param=where)
        return _error(request, 422, message, detail=json.loads(json.dumps(list(e.errors()), default=str)))

    @app.exception_handler(MadspyError)
    async def madspy_error(request: Request, e: MadspyError) -> JSONResponse:
        """The caller's fault answers its 4xx, a backend's (a store that broke) its 5xx."""
        return _error(request, e.http_status, str(e), param=getattr(e, "param", None))

    @app.exception_handler(UnknownProgram)
    async def unknown_program(request: Request, e: UnknownProgram) -> JSONResponse:
        return _error(request, e.http_status, str(e), param="model", code="model_not_found")

    @app.exception_handler(DebateTimeout)
    async def timed_out(request: Request, e: DebateTimeout) -> JSONResponse:
        # x-should-retry: the openai package would otherwise retry a 504 and start the debate again.
        return _error(request, e.http_status, str(e), headers={"x-should-retry": "false"}, transcript_id=e.tid)

    @app.exception_handler(Exception)
    async def internal(request: Request, _: Exception) -> JSONResponse:
        return _error(request, 500, "internal error")

    async def run_debate(req: DebateRequest, stream: bool) -> DebateResponse | StreamingResponse:
        run = service.launch(req, stream)
        if stream:
            return StreamingResponse(
                _debate_events(service, run), media_type="text/event-stream", headers={"Cache-Control": "no-cache"}
            )
        return _response(await service.outcome(run), run.tid)

    @app.post(
        "/v1/debate",
        response_model=DebateResponse,
        dependencies=[Depends(authorized)],
        responses={400: {}, 401: {}, 404: {}, 413: {}, 422: {}, 429: {}, 504: {}},
    )
    async def debate(req: DebateRequest, stream: bool = False):
        """Debate one question; with ``?stream=true``, server-sent events per round."""
        return await run_debate(req, stream)

    @app.post(
        "/v1/debate/stream", dependencies=[Depends(authorized)], responses={200: {"content": {"text/event-stream": {}}}}
    )
    async def debate_stream(req: DebateRequest):
        """Debate one question, streaming ``round`` events, then ``result`` (or ``error``)."""
        return await run_debate(req, stream=True)

    @app.post(
        "/v1/chat/completions",
        dependencies=[Depends(authorized)],
        responses={200: {"content": {"text/event-stream": {}}}, 400: {}, 401: {}, 404: {}, 413: {}, 429: {}, 504: {}},
    )
    async def chat_completions(chat: openai_api.ChatRequest):
        """OpenAI chat completions: ``model`` names a served program, the last user message is the question."""
        options = chat.check(own=DebateOptions.model_fields)
        ask = openai_api.ask_of(chat.messages)
        try:
            req = DebateRequest(question=ask.question, program=chat.model, **options)
        except ValidationError as e:
            raise openai_api.ChatRequestError(*_validation_message(list(e.errors()))) from None
        run = service.launch(req, chat.stream)
        if chat.stream:
            return StreamingResponse(
                _chat_chunks(service, run, chat.model, ask, chat.include_usage),
                media_type="text/event-stream",
                headers={"Cache-Control": "no-cache"},
            )
        result = await service.outcome(run)
        content = openai_api.reply_content(ask, result.answer, _account(result, run.tid))
        return openai_api.completion(run.tid, chat.model, content, result.usage, _chat_extra(result, run.tid))

    @app.get("/v1/models", dependencies=[Depends(authorized)])
    async def models() -> dict[str, Any]:
        """The served programs, as OpenAI's model list; ``madspy.model`` is the LM each debates with."""
        return {"object": "list", "data": [model_card(name) for name in service.programs]}

    @app.get("/v1/models/{name}", dependencies=[Depends(authorized)])
    async def model(name: str) -> dict[str, Any]:
        """One served program, as an OpenAI model."""
        service.program(name)
        return model_card(name)

    def model_card(name: str) -> dict[str, Any]:
        program = service.programs[name]
        return openai_api.model_card(
            name,
            _created(program, started),
            madspy={"model": program.config.model, "task": program.manifest.get("task")},
        )

    @app.get("/v1/transcripts/{tid}", dependencies=[Depends(authorized)])
    async def transcript(tid: str) -> dict[str, Any]:
        """The full transcript of a finished debate."""
        found = service.store.get(tid)
        if found is None:
            raise HTTPException(404, f"no transcript {tid}")
        return found.model_dump(mode="json")

    @app.get("/healthz")
    async def healthz() -> dict[str, Any]:
        """Liveness, the served programs' models and free debate slots (``model``: the first program's)."""
        return {
            "status": "ok",
            "model": service.program(None).config.model,
            "programs": {name: p.config.model for name, p in service.programs.items()},
            "running": service.metrics.in_flight,
            "max_concurrent": settings.max_concurrent,
        }

    @app.get("/metrics", response_class=PlainTextResponse, dependencies=[Depends(authorized)])
    async def metrics() -> str:
        """Prometheus text exposition."""
        return service.metrics.render()

    return app


def serve(programs: ProgramSource | Mapping[str, ProgramSource], settings: ServeSettings) -> None:
    """Run the app on uvicorn until interrupted (refuses a non-loopback host without an API key)."""
    import uvicorn

    check_bind(settings.host, settings.api_key)
    uvicorn.run(create_app(programs, settings), host=settings.host, port=settings.port, log_level="info")
