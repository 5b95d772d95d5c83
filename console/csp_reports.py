"""Where browsers report what the Content-Security-Policy refused (`report-uri` in settings).

A refusal in an agent's browser is either an attack the policy stopped or a page of ours that
broke (a new inline script, a style attribute): both are invisible without the report. Each one
is logged as a warning and counted on `/metrics`, so a release that breaks a page shows as a
rising counter rather than as a call from an agency.

The endpoint takes no session, no CSRF token (browsers send reports without either) and
anybody's POST: so the body is capped, only known fields are kept, each masked and cut, and a
flood costs a log line each at most — the log's own rate limits apply, never a 500.
"""

from __future__ import annotations

import json
import logging

from django.http import HttpRequest, HttpResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST
from prometheus_client import Counter

from console.http_metrics import registry
from insurehub.masking import mask_and_cut

logger = logging.getLogger("insurehub.csp")

MAX_REPORT_BYTES = 8 * 1024
# The fields of a report (CSP level 2's "csp-report" and the Reporting API's "body") worth keeping.
_FIELDS = {
    "document-uri": "document",
    "documentURL": "document",
    "violated-directive": "directive",
    "effective-directive": "directive",
    "effectiveDirective": "directive",
    "blocked-uri": "blocked",
    "blockedURL": "blocked",
    "source-file": "source",
    "sourceFile": "source",
    "line-number": "line",
    "lineNumber": "line",
}
_FIELD_LIMIT = 300

VIOLATIONS = Counter(
    "insurehub_csp_violations",
    "Content-Security-Policy refusals reported by browsers, by directive.",
    ["directive"],
    registry=registry(),
)
# Directives are few; anything else a sender makes up is counted as "other", so labels stay bounded.
_KNOWN_DIRECTIVES = {
    "default-src", "script-src", "script-src-elem", "script-src-attr", "style-src", "style-src-elem",
    "style-src-attr", "img-src", "font-src", "connect-src", "object-src", "base-uri", "form-action",
    "frame-ancestors", "frame-src", "worker-src", "manifest-src", "media-src",
}  # fmt: skip


@csrf_exempt
@require_POST
def csp_report(request: HttpRequest) -> HttpResponse:
    length = request.headers.get("Content-Length", "")
    if length.isdigit() and int(length) > MAX_REPORT_BYTES:
        return HttpResponse(status=413)
    body = request.read(MAX_REPORT_BYTES + 1)
    if len(body) > MAX_REPORT_BYTES:
        return HttpResponse(status=413)
    for report in _reports(body):
        directive = report.get("directive", "").split(" ", 1)[0]
        VIOLATIONS.labels(directive if directive in _KNOWN_DIRECTIVES else "other").inc()
        logger.warning(
            "CSP refused %s on %s: blocked %s (%s line %s)",
            directive or "?",
            report.get("document", "?"),
            report.get("blocked", "?"),
            report.get("source", "?"),
            report.get("line", "?"),
        )
    return HttpResponse(status=204)


def _reports(body: bytes) -> list[dict[str, str]]:
    """The reports in a body, as the few masked fields we keep; nothing for what is not one."""
    try:
        parsed = json.loads(body.decode("utf-8", errors="replace"))
    except ValueError:
        return []
    candidates = parsed if isinstance(parsed, list) else [parsed]
    reports = []
    for candidate in candidates[:20]:
        if not isinstance(candidate, dict):
            continue
        inner = candidate.get("csp-report") or candidate.get("body")
        if not isinstance(inner, dict):
            continue
        kept = {
            name: mask_and_cut(inner[field], _FIELD_LIMIT)
            for field, name in _FIELDS.items()
            if field in inner and isinstance(inner[field], (str, int))
        }
        if kept:
            reports.append(kept)
    return reports
