"""The server's Prometheus metrics, one registry per app (prometheus_client renders the text exposition).

Example:
    >>> metrics = Metrics()
    >>> metrics.request(200, 0.3)
    >>> 'madspy_http_requests_total{code="200"} 1.0' in metrics.render()
    True
"""

from __future__ import annotations

import threading

import dspy
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

LATENCY_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0)


class Metrics:
    """Requests by status and latency, tokens and debates by status, debates running now."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self._requests = Counter(
            "madspy_http_requests", "HTTP requests by status code.", ["code"], registry=self.registry
        )
        self._latency = Histogram(
            "madspy_http_request_seconds", "HTTP request latency.", buckets=LATENCY_BUCKETS, registry=self.registry
        )
        self._tokens = Counter(
            "madspy_tokens", "LM tokens spent by finished debates.", ["kind"], registry=self.registry
        )
        self._debates = Counter("madspy_debates", "Finished debates by status.", ["status"], registry=self.registry)
        self._running = Gauge("madspy_debates_in_flight", "Debates running now.", registry=self.registry)
        self._lock = threading.Lock()
        self.in_flight = 0  # also read by /healthz

    def request(self, code: int, seconds: float) -> None:
        self._requests.labels(code=str(code)).inc()
        self._latency.observe(seconds)

    def debate(self, result: dspy.Prediction) -> None:
        self._debates.labels(status=str(result.status)).inc()
        self._tokens.labels(kind="prompt").inc(result.usage["prompt_tokens"])
        self._tokens.labels(kind="completion").inc(result.usage["completion_tokens"])

    def running(self, delta: int) -> None:
        with self._lock:
            self.in_flight += delta
            self._running.set(self.in_flight)

    def render(self) -> str:
        return generate_latest(self.registry).decode()
