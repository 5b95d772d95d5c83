"""HTTP request metrics on `/metrics`, beside the business metrics: count and latency by view name.

Unlike the business metrics (read from the database at scrape time, the same from every
process), these are counted where requests are served, in process memory. So that one scrape
sees every gunicorn worker of a machine, `scripts/serve.sh` sets `PROMETHEUS_MULTIPROC_DIR`:
prometheus-client then keeps each worker's numbers in a file there and the scrape sums them
(its multiprocess mode). Without it (runserver, tests) a scrape reads its own process only.
With several machines, scrape each machine for these (sum them), and any one for the rest.

Labels are bounded: `view` is the URL pattern's name (`quote_request_stream`, `admin:index`),
"unmatched" for a URL no pattern took; `method` and `status` as sent. Never a path: a path
names objects (and a search once named people).

A streamed response (the live results) is timed to its first byte, not to its end.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable

from django.http import HttpRequest, HttpResponse
from prometheus_client import CollectorRegistry, Counter, Histogram
from prometheus_client.core import Metric
from prometheus_client.multiprocess import MultiProcessCollector

_registry = CollectorRegistry(auto_describe=True)
REQUESTS = Counter(
    "insurehub_http_requests",
    "HTTP requests served, by URL pattern name, method and status.",
    ["view", "method", "status"],
    registry=_registry,
)
LATENCY = Histogram(
    "insurehub_http_request_duration_seconds",
    "Time to answer an HTTP request (to the first byte of a streamed one), by URL pattern name.",
    ["view", "method"],
    registry=_registry,
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0),
)


def registry() -> CollectorRegistry:
    """This process's registry, for other per-process counters that /metrics shows beside these."""
    return _registry


METHODS = {"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"}


def http_metric_families() -> Iterable[Metric]:
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        registry = CollectorRegistry()
        MultiProcessCollector(registry)
        return list(registry.collect())
    return list(_registry.collect())


def view_name(request: HttpRequest) -> str:
    match = getattr(request, "resolver_match", None)
    if match is None:
        return "unmatched"
    return match.view_name or getattr(match.func, "__name__", "unnamed")


class RequestMetricsMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        started = time.perf_counter()
        response = self.get_response(request)
        name = view_name(request)
        method = request.method if request.method in METHODS else "other"
        REQUESTS.labels(name, method, str(response.status_code)).inc()
        LATENCY.labels(name, method).observe(time.perf_counter() - started)
        return response
