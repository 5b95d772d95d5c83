"""The ``/_sandbox/`` control endpoints: the same operations as ``SandboxState``, over HTTP.

For out-of-process users (the demo, benchmarks, worker tests). No authentication: the
sandboxes only ever listen on loopback test machines.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import unquote

from .core import ConfigError, SandboxState
from .insurer import Request, Response

PREFIX = "/_sandbox/"


def handle_control(state: SandboxState, request: Request) -> Response:
    """Answer one control call; bad input is a 400 ``{"error": "..."}``."""
    try:
        payload = json.loads(request.body.decode("utf-8")) if request.body.strip() else {}
    except (UnicodeDecodeError, ValueError):
        return Response.json(400, {"error": "body must be JSON"})
    if not isinstance(payload, dict):
        return Response.json(400, {"error": "body must be a JSON object"})
    try:
        return _route(state, request.method, request.path.removeprefix(PREFIX).rstrip("/"), payload)
    except ConfigError as exc:
        return Response.json(400, {"error": str(exc)})


def _route(state: SandboxState, method: str, path: str, payload: dict[str, Any]) -> Response:
    if (method, path) == ("POST", "reset"):
        state.reset()
        return Response.json(200, {"ok": True})
    if path == "config" and method in ("GET", "PUT", "PATCH"):
        return Response.json(200, state.configure(**payload) if method != "GET" else state.get_config())
    if path == "faults":
        if method == "POST":
            return Response.json(200, {"faults": state.add_faults(payload.get("faults"))})
        if method == "DELETE":
            state.clear_faults()
            return Response.json(200, {"faults": []})
        if method == "GET":
            return Response.json(200, {"faults": state.faults()})
    if (method, path) == ("GET", "counts"):
        return Response.json(200, state.counts())
    if path == "accounts":
        if method == "POST":
            return Response.json(200, {"accounts": state.add_accounts(payload.get("accounts"))})
        if method == "GET":
            return Response.json(200, {"accounts": state.accounts()})
    if (method, path) == ("POST", "policies"):
        state.seed_policies(payload.get("policies"))
        return Response.json(200, {"ok": True})
    if method == "POST" and path.startswith("policies/"):
        policy_no = unquote(path.removeprefix("policies/"))
        try:
            state.set_policy_status(policy_no, payload.get("status"))
        except KeyError:
            return Response.json(404, {"error": f"no policy {policy_no}"})
        return Response.json(200, {"ok": True})
    return Response.json(404, {"error": f"no control endpoint {method} {PREFIX}{path}"})
