"""Serve a debate program over HTTP: FastAPI app factory, limits, metrics and a uvicorn runner.

Endpoints: ``POST /v1/debate`` (``?stream=true`` or ``POST /v1/debate/stream`` for
server-sent events, one per finished round), ``GET /v1/transcripts/{id}``,
``GET /healthz``, ``GET /metrics`` (Prometheus text) and the OpenAPI docs at
``/docs``. With ``MADSPY_API_KEY`` set every ``/v1`` route and ``/metrics`` needs
``Authorization: Bearer <key>``; without it the server only binds to loopback.

Limits: bodies over ``max_body`` bytes get 413; when ``max_concurrent`` debates
run, a new one gets 429 at once; a debate slower than ``timeout_s`` gets 504. Every
debate runs with a time budget of at most ``timeout_s`` (a request may ask for
less with ``budget_s`` and gets its answer with status ``time_exhausted``), so a
timed-out debate starts no new step: the calls in flight finish, it is stored
under the ``transcript_id`` the 504 names, and its slot frees.

Example:
    >>> from fastapi.testclient import TestClient
    >>> from madspy.serve import ServeSettings, create_app
    >>> # app = create_app("compiled/x.json", ServeSettings(db="transcripts.sqlite3"))
    >>> # TestClient(app).post("/v1/debate", json={"question": "What is 17 * 23?"}).json()["answer"]
"""

from __future__ import annotations

import asyncio
import hmac
import ipaddress
import json
import os
import threading
import time
from collections import Counter
from collections.abc import AsyncIterator, Callable
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import dspy
from fastapi import Depends, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, PlainTextResponse, StreamingResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from starlette.exceptions import HTTPException

from madspy.errors import InputError, MadspyError
from madspy.models import check_question
from madspy.programs.artifact import load_program
from madspy.programs.config import TaskKind
from madspy.programs.debate import Debate
from madspy.programs.transcript import Round
from madspy.store import TranscriptStore, new_id

API_KEY_ENV = "MADSPY_API_KEY"
LATENCY_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0)


class ServeError(MadspyError):
    """A server that must not start as configured."""


@dataclass(frozen=True)
class ServeSettings:
    """How the server runs; ``api_key`` defaults to the ``MADSPY_API_KEY`` environment variable."""

    host: str = "127.0.0.1"
    port: int = 8000
    db: str | Path = "transcripts.sqlite3"
    max_concurrent: int = 4
    timeout_s: float = 120.0
    max_body: int = 65536
    budget_tokens: int | None = None  # ceiling on a request's token budget (None: no ceiling)
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
        raise ServeError(f"refusing to serve on {host} without an API key: set {API_KEY_ENV} "
                         "or listen on 127.0.0.1")


# -- API models ------------------------------------------------------------------

class DebateRequest(BaseModel):
    """One question; optional per-request changes to the program's config."""

    model_config = ConfigDict(extra="forbid")
    question: str
    budget_tokens: int | None = Field(None, ge=1, description="hard token budget for this debate")
    budget_s: float | None = Field(None, gt=0, description="seconds for this debate; no step starts after them")
    rounds: int | None = Field(None, ge=1, le=20, description="rounds in all, round 0 included")
    protocol: Literal["majority", "judge"] | None = None
    task_kind: TaskKind | None = Field(
        None, description="reasoning, knowledge or open_ended: picks the protocol of a program whose protocol is auto")


class DebateResponse(BaseModel):
    """A debate's outcome; the full transcript is at ``/v1/transcripts/{transcript_id}``."""

    answer: str | None
    confidence: float
    status: str
    stop_reason: str
    usage: dict[str, int]
    transcript_id: str


# -- the debate behind a request -------------------------------------------------

def fork(base: Debate, **changes: Any) -> Debate:
    """A new ``Debate`` with ``base``'s role instructions and demos and its config updated by ``changes``."""
    debate = Debate(base.config.updated(**changes), normalize=base.normalize)
    source = dict(base.named_predictors())
    for name, predictor in debate.named_predictors():
        predictor.signature, predictor.demos = source[name].signature, list(source[name].demos)
    debate.manifest = base.manifest
    return debate


# -- metrics ---------------------------------------------------------------------

class Metrics:
    """Counters in Prometheus text exposition format (hand-written: no extra dependency)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.requests: Counter[str] = Counter()
        self.buckets = [0] * len(LATENCY_BUCKETS)
        self.latency_sum = 0.0
        self.latency_count = 0
        self.tokens: Counter[str] = Counter()
        self.debates: Counter[str] = Counter()
        self.in_flight = 0

    def request(self, code: int, seconds: float) -> None:
        with self._lock:
            self.requests[str(code)] += 1
            self.latency_sum += seconds
            self.latency_count += 1
            for i, bound in enumerate(LATENCY_BUCKETS):
                self.buckets[i] += seconds <= bound

    def debate(self, result: dspy.Prediction) -> None:
        with self._lock:
            self.debates[result.status] += 1
            self.tokens["prompt"] += result.usage["prompt_tokens"]
            self.tokens["completion"] += result.usage["completion_tokens"]

    def running(self, delta: int) -> None:
        with self._lock:
            self.in_flight += delta

    def render(self) -> str:
        with self._lock:
            lines = ["# HELP madspy_http_requests_total HTTP requests by status code.",
                     "# TYPE madspy_http_requests_total counter"]
            lines += [f'madspy_http_requests_total{{code="{c}"}} {n}' for c, n in sorted(self.requests.items())]
            lines += ["# HELP madspy_http_request_seconds HTTP request latency.",
                      "# TYPE madspy_http_request_seconds histogram"]
            lines += [f'madspy_http_request_seconds_bucket{{le="{b}"}} {n}'
                      for b, n in zip(LATENCY_BUCKETS, self.buckets)]
            lines += [f'madspy_http_request_seconds_bucket{{le="+Inf"}} {self.latency_count}',
                      f"madspy_http_request_seconds_sum {self.latency_sum:.6f}",
                      f"madspy_http_request_seconds_count {self.latency_count}",
                      "# HELP madspy_tokens_total LM tokens spent by finished debates.",
                      "# TYPE madspy_tokens_total counter"]
            lines += [f'madspy_tokens_total{{kind="{k}"}} {n}' for k, n in sorted(self.tokens.items())]
            lines += ["# HELP madspy_debates_total Finished debates by status.", "# TYPE madspy_debates_total counter"]
            lines += [f'madspy_debates_total{{status="{s}"}} {n}' for s, n in sorted(self.debates.items())]
            lines += ["# HELP madspy_debates_in_flight Debates running now.", "# TYPE madspy_debates_in_flight gauge",
                      f"madspy_debates_in_flight {self.in_flight}"]
        return "\n".join(lines) + "\n"


# -- ASGI middleware -------------------------------------------------------------

async def _send_json(send: Callable, status: int, body: dict[str, Any]) -> None:
    data = json.dumps(body).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode())]})
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
                return await _send_json(counted_send, 413, {"error": f"request body over {self.max_body} bytes"})
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


# -- the app ---------------------------------------------------------------------

class _Service:
    """Per-app state: the base program, store, slots, worker threads and metrics."""

    def __init__(self, base: Debate, settings: ServeSettings):
        self.base, self.settings = base, settings
        self.store = TranscriptStore(settings.db)
        self.slots = threading.BoundedSemaphore(settings.max_concurrent)
        self.pool = ThreadPoolExecutor(max_workers=settings.max_concurrent, thread_name_prefix="debate")
        self.metrics = Metrics()

    def prepare(self, req: DebateRequest) -> tuple[Debate, str]:
        """The per-request debate and checked question; raises InputError (400) on bad input."""
        asked = {"rounds": req.rounds, "protocol": req.protocol, "task_kind": req.task_kind}
        changes = {k: v for k, v in asked.items() if v is not None}
        ceiling = self.settings.budget_tokens
        budget = min(filter(None, (req.budget_tokens, ceiling)), default=None)
        if budget is not None:
            changes["budget_tokens"] = budget
        changes["budget_s"] = min(filter(None, (req.budget_s, self.base.config.budget_s, self.settings.timeout_s)))
        try:
            debate = fork(self.base, **changes)
        except ValidationError as e:
            raise InputError(f"invalid debate settings: {e.errors()[0]['msg']}") from None
        question = req.question
        for model in debate.config.models():
            question = check_question(question, model, debate.config.max_tokens)
        return debate, question

    def start(self, debate: Debate, question: str, tid: str,
              on_round: Callable[[Round], None] | None = None) -> Future:
        """Run the debate in a worker thread, holding a slot; 429 when none is free."""
        if not self.slots.acquire(blocking=False):
            raise HTTPException(429, f"all {self.settings.max_concurrent} debate slots are busy; retry later",
                                headers={"Retry-After": "1"})
        self.metrics.running(+1)

        def work() -> dspy.Prediction:
            try:
                result = debate(question=question, on_round=on_round)
                self.store.put(result.transcript, tid)
                self.metrics.debate(result)
                return result
            finally:
                self.metrics.running(-1)
                self.slots.release()

        return self.pool.submit(work)

    async def events(self, future: Future, tid: str, rounds: asyncio.Queue) -> AsyncIterator[str]:
        """Server-sent events: ``round`` per finished round, then ``result`` (or ``error``).

        A client that leaves mid-stream stops only the events: the debate finishes and is stored.
        """
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.settings.timeout_s
        finished = asyncio.wrap_future(future)  # never cancelled: that would cancel the debate's slot
        getter: asyncio.Future | None = None
        try:
            while not finished.done() or not rounds.empty():
                getter = getter or asyncio.ensure_future(rounds.get())
                done, _ = await asyncio.wait({getter, finished}, timeout=max(deadline - loop.time(), 0),
                                             return_when=asyncio.FIRST_COMPLETED)
                if not done:
                    yield _sse("error", _timeout_body(self.settings.timeout_s, tid))
                    return
                if getter in done:
                    yield _sse("round", getter.result())
                    getter = None
            yield _sse("result", _response(finished.result(), tid).model_dump())
        except Exception as e:  # the stream is open: errors become events, not statuses
            yield _sse("error", {"error": str(e) if isinstance(e, MadspyError) else "internal error"})
        finally:
            if getter is not None:
                getter.cancel()


def _sse(event: str, data: dict[str, Any]) -> str:
    return f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n"


def _response(result: dspy.Prediction, tid: str) -> DebateResponse:
    return DebateResponse(answer=result.answer, confidence=result.confidence, status=result.status,
                          stop_reason=result.stop_reason, usage=result.usage, transcript_id=tid)


def _timeout_body(timeout_s: float, tid: str) -> dict[str, Any]:
    return {"error": f"the debate took longer than {timeout_s:g}s; it goes on and will be stored as "
                     f"/v1/transcripts/{tid}", "transcript_id": tid}


def _error(status: int, message: str, **extra: Any) -> JSONResponse:
    return JSONResponse({"error": message, **extra}, status_code=status)


def _validation_message(errors: list[dict[str, Any]]) -> str:
    first = errors[0]
    if first.get("type") == "json_invalid":
        return "the request body is not valid JSON"
    where = ".".join(str(p) for p in first.get("loc", ()) if p != "body")
    return f"invalid request: {where or 'body'}: {first.get('msg')}"


def create_app(program: str | Path | Debate, settings: ServeSettings | None = None) -> FastAPI:
    """A FastAPI app serving ``program`` (a saved program path, or a ``Debate`` whose state is forked per request).

    >>> # app = create_app("compiled/x.json", ServeSettings(max_concurrent=2, timeout_s=60))
    """
    settings = settings or ServeSettings()
    service = _Service(program if isinstance(program, Debate) else load_program(program), settings)
    bearer = HTTPBearer(auto_error=False)

    def authorized(credentials: HTTPAuthorizationCredentials | None = Depends(bearer)) -> None:
        key = settings.api_key
        if key is None:
            return
        given = credentials.credentials if credentials else ""
        if not hmac.compare_digest(given.encode(), key.encode()):
            raise HTTPException(401, "missing or wrong API key: send Authorization: Bearer <key>",
                                headers={"WWW-Authenticate": "Bearer"})

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        yield
        service.pool.shutdown(wait=True)  # running debates finish and are stored
        service.store.close()

    app = FastAPI(title="madspy", summary="Multi-agent debate as a service", lifespan=lifespan)
    app.state.service = service
    app.add_middleware(_Limits, max_body=settings.max_body, metrics=service.metrics)

    @app.exception_handler(HTTPException)
    async def http_error(_: Request, e: HTTPException) -> JSONResponse:
        return JSONResponse({"error": e.detail}, status_code=e.status_code, headers=e.headers)

    @app.exception_handler(RequestValidationError)
    async def invalid(_: Request, e: RequestValidationError) -> JSONResponse:
        return _error(422, _validation_message(list(e.errors())), detail=json.loads(json.dumps(
            list(e.errors()), default=str)))

    @app.exception_handler(MadspyError)
    async def bad_input(_: Request, e: MadspyError) -> JSONResponse:
        return _error(400, str(e))

    async def run_debate(req: DebateRequest, stream: bool) -> DebateResponse | StreamingResponse | JSONResponse:
        debate, question = service.prepare(req)
        tid = new_id()
        if stream:
            loop, rounds = asyncio.get_running_loop(), asyncio.Queue()

            def on_round(rnd: Round) -> None:
                data = rnd.model_dump(mode="json")
                try:
                    loop.call_soon_threadsafe(rounds.put_nowait, data)
                except RuntimeError:  # the event loop is gone (server stopping): nobody listens
                    pass

            future = service.start(debate, question, tid, on_round)
            return StreamingResponse(service.events(future, tid, rounds), media_type="text/event-stream",
                                     headers={"Cache-Control": "no-cache"})
        future = service.start(debate, question, tid)
        try:
            result = await asyncio.wait_for(asyncio.shield(asyncio.wrap_future(future)), settings.timeout_s)
        except asyncio.TimeoutError:
            return JSONResponse(_timeout_body(settings.timeout_s, tid), status_code=504)
        return _response(result, tid)

    @app.post("/v1/debate", response_model=DebateResponse, dependencies=[Depends(authorized)],
              responses={400: {}, 401: {}, 413: {}, 422: {}, 429: {}, 504: {}})
    async def debate(req: DebateRequest, stream: bool = False):
        """Debate one question; with ``?stream=true``, server-sent events per round."""
        return await run_debate(req, stream)

    @app.post("/v1/debate/stream", dependencies=[Depends(authorized)],
              responses={200: {"content": {"text/event-stream": {}}}})
    async def debate_stream(req: DebateRequest):
        """Debate one question, streaming ``round`` events, then ``result`` (or ``error``)."""
        return await run_debate(req, stream=True)

    @app.get("/v1/transcripts/{tid}", dependencies=[Depends(authorized)])
    async def transcript(tid: str) -> dict[str, Any]:
        """The full transcript of a finished debate."""
        found = service.store.get(tid)
        if found is None:
            raise HTTPException(404, f"no transcript {tid}")
        return found.model_dump(mode="json")

    @app.get("/healthz")
    async def healthz() -> dict[str, Any]:
        """Liveness, the served model and free debate slots."""
        return {"status": "ok", "model": service.base.config.model,
                "running": service.metrics.in_flight, "max_concurrent": settings.max_concurrent}

    @app.get("/metrics", response_class=PlainTextResponse, dependencies=[Depends(authorized)])
    async def metrics() -> str:
        """Prometheus text exposition."""
        return service.metrics.render()

    return app


def serve(program: str | Path, settings: ServeSettings) -> None:
    """Run the app on uvicorn until interrupted (refuses a non-loopback host without an API key)."""
    import uvicorn

    check_bind(settings.host, settings.api_key)
    uvicorn.run(create_app(program, settings), host=settings.host, port=settings.port, log_level="info")
