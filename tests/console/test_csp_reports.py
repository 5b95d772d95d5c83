"""Browsers' reports of what the Content-Security-Policy refused: logged, counted, never a 500."""

from __future__ import annotations

import json
import logging

import pytest
from django.test import Client

from console.csp_reports import MAX_REPORT_BYTES

pytestmark = pytest.mark.django_db

REPORT = {
    "csp-report": {
        "document-uri": "https://acente.example/musteriler/?tckn=10000000146",
        "violated-directive": "script-src-elem",
        "effective-directive": "script-src-elem",
        "blocked-uri": "inline",
        "source-file": "https://acente.example/musteriler/",
        "line-number": 12,
    }
}


def _metric(directive: str) -> float:
    from console.csp_reports import VIOLATIONS

    return VIOLATIONS.labels(directive)._value.get()


def test_every_page_names_the_report_endpoint(client):
    policy = client.get("/giris/").headers["Content-Security-Policy"]
    assert "report-uri /csp-rapor/" in policy


def test_a_report_is_logged_masked_and_counted_without_a_session_or_csrf_token(caplog):
    client = Client(enforce_csrf_checks=True)
    before = _metric("script-src-elem")
    with caplog.at_level(logging.WARNING, logger="insurehub.csp"):
        answer = client.post("/csp-rapor/", json.dumps(REPORT), content_type="application/csp-report")
    assert answer.status_code == 204
    assert _metric("script-src-elem") == before + 1
    (line,) = [r.getMessage() for r in caplog.records if r.name == "insurehub.csp"]
    assert "script-src-elem" in line and "/musteriler/" in line and "line 12" in line
    assert "10000000146" not in line and "100******46" in line


def test_the_reporting_api_shape_is_read_too():
    client = Client()
    body = [{"type": "csp-violation", "body": {"documentURL": "https://a/", "effectiveDirective": "style-src-attr"}}]
    before = _metric("style-src-attr")
    assert client.post("/csp-rapor/", json.dumps(body), content_type="application/reports+json").status_code == 204
    assert _metric("style-src-attr") == before + 1


def test_junk_a_made_up_directive_and_an_oversized_body_are_no_500():
    client = Client()
    assert client.post("/csp-rapor/", b"{not json", content_type="application/csp-report").status_code == 204
    made_up = {"csp-report": {"violated-directive": "x" * 500}}
    before = _metric("other")
    assert client.post("/csp-rapor/", json.dumps(made_up), content_type="application/csp-report").status_code == 204
    assert _metric("other") == before + 1
    huge = b'{"csp-report": {"blocked-uri": "' + b"a" * MAX_REPORT_BYTES + b'"}}'
    assert client.post("/csp-rapor/", huge, content_type="application/csp-report").status_code == 413
    assert client.get("/csp-rapor/").status_code == 405
