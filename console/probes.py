"""`/healthz` and `/readyz`, answered first (`ProbeMiddleware`, first in MIDDLEWARE).

What each checks is in `console.readiness`. Both answer before host validation, the HTTPS redirect
and sessions: a kubelet or a load balancer asks a pod's address over plain HTTP. The readiness
checks (django-health-check and what it imports, ~0.4 s) load at the first `/readyz`, not with
every web worker: a worker booting under load must answer its first page quickly.
"""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse


def healthz(request: HttpRequest) -> HttpResponse:
    """Liveness: the process answers; nothing else is touched."""
    response = HttpResponse("ok\n", content_type="text/plain; charset=utf-8")
    response["Cache-Control"] = "no-store"
    return response


class ProbeMiddleware:
    """Answers `/healthz` and `/readyz` before anything can refuse a probe."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.method in ("GET", "HEAD"):
            if request.path == "/healthz":
                return healthz(request)
            if request.path == "/readyz":
                from console.readiness import readyz

                return readyz(request)
        return self.get_response(request)
