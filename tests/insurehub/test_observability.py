"""JSON logs, error reports and HTTP request metrics: seen by on-call, with no personal data (issue 21)."""

from __future__ import annotations

import json
import logging

import pytest
from django.test import Client
from django.urls import reverse

from insurehub.log_context import log_context_bound
from integrations import error_reports
from integrations.log_json import JsonFormatter, scrub_personal_data

TCKN = "10000000146"


def record(message: str, *args, exc_info=None, **extra) -> logging.LogRecord:
    made = logging.LogRecord("quotes.services", logging.ERROR, __file__, 1, message, args, exc_info)
    for name, value in extra.items():
        setattr(made, name, value)
    return made


def test_a_json_line_carries_the_context_and_masks_the_identity_number():
    """One object a line: the request, agency, insurer, operation and record; the TCKN masked."""
    with log_context_bound(request_id="req-1", agency="ACENTE1", insurer="anka"):
        line = json.loads(JsonFormatter().format(record("teklif alınamadı: kimlik %s", TCKN, operation="trafik_quote")))
    assert line["level"] == "ERROR" and line["logger"] == "quotes.services"
    assert line["request_id"] == "req-1" and line["agency"] == "ACENTE1" and line["insurer"] == "anka"
    assert line["operation"] == "trafik_quote"
    assert TCKN not in line["message"] and "100******46" in line["message"]
    assert line["time"].endswith("+00:00")


def test_a_traceback_in_a_json_line_is_masked_too():
    try:
        raise ValueError(f"owner_id={TCKN} e-posta ayse@example.com tel 0532 123 45 67")
    except ValueError:
        import sys

        line = json.loads(JsonFormatter().format(record("çöktü", exc_info=sys.exc_info())))
    assert "ValueError" in line["exc"]
    assert TCKN not in line["exc"] and "ayse@example.com" not in line["exc"] and "0532 123 45 67" not in line["exc"]


def test_scrubbing_replaces_emails_and_phones_and_keeps_policy_numbers():
    text = scrub_personal_data("poliçe 2026000123456 ayse@example.com +90 532 123 45 67")
    assert "2026000123456" in text and "<e-posta>" in text and "<telefon>" in text


def test_log_format_json_is_what_the_settings_choose(monkeypatch):
    """LOG_FORMAT=json switches the console handler to the JSON formatter; anything else is refused."""
    import subprocess
    import sys

    from tests.conftest import REPO_ROOT

    code = (
        "import django, logging; django.setup(); "
        "logging.getLogger('x').warning('kimlik 10000000146'); "
        "from django.conf import settings; print(settings.LOGGING['handlers']['console']['formatter'])"
    )
    env = {"DJANGO_SETTINGS_MODULE": "insurehub.settings.test", "LOG_FORMAT": "json", "PATH": "/usr/bin:/bin"}
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "json"
    line = json.loads(done.stderr.strip().splitlines()[-1])
    assert line["message"] == "kimlik 100******46"
    env["LOG_FORMAT"] = "yaml"
    refused = subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, env=env, capture_output=True, text=True)
    assert refused.returncode != 0 and "LOG_FORMAT must be" in refused.stderr


@pytest.mark.django_db
def test_every_response_names_its_request_id(agents):
    """A caller's X-Request-ID is kept (so proxy and app logs meet); otherwise one is made."""
    client = Client()
    assert client.get("/giris/", headers={"X-Request-ID": "lb-42"})["X-Request-ID"] == "lb-42"
    made = client.get("/giris/", headers={"X-Request-ID": "bad id with spaces"})["X-Request-ID"]
    assert made != "bad id with spaces" and len(made) == 32


def test_sentry_starts_only_with_a_dsn_and_never_sends_personal_data(settings, monkeypatch):
    """send_default_pii off, no request bodies, no frame locals, the scrubbing hook installed."""
    import sentry_sdk

    seen: dict = {}
    monkeypatch.setattr(sentry_sdk, "init", lambda **kwargs: seen.update(kwargs))
    monkeypatch.setattr(error_reports, "_started", False)
    settings.SENTRY_DSN = ""
    assert error_reports.sentry_start() is False and not seen
    settings.SENTRY_DSN = "https://public@sentry.invalid/1"
    assert error_reports.sentry_start() is True
    assert seen["send_default_pii"] is False
    assert seen["max_request_body_size"] == "never"
    assert seen["include_local_variables"] is False
    assert seen["before_send"] is error_reports.before_send


def test_before_send_scrubs_an_event_from_a_customer_form():
    """An exception over a quote form: its message, the URL's query and breadcrumbs lose the person."""
    event = {
        "exception": {"values": [{"type": "ValueError", "value": f"owner_id {TCKN} geçersiz"}]},
        "request": {
            "url": "https://desk/teklif/yeni/trafik/",
            "query_string": f"tckn={TCKN}",
            "data": {"owner_id": TCKN, "phone": "05321234567"},
            "cookies": {"sessionid": "s3cret"},
            "headers": {"Cookie": "sessionid=s3cret", "Authorization": "Token abc", "Accept": "text/html"},
        },
        "user": {"email": "ayse@example.com"},
        "breadcrumbs": {"values": [{"message": "mail to ayse@example.com"}]},
    }
    sent = json.dumps(error_reports.before_send(event, {}), ensure_ascii=False)
    for secret in (TCKN, "s3cret", "Token abc", "ayse@example.com", "05321234567"):
        assert secret not in sent
    assert "text/html" in sent


@pytest.mark.django_db
def test_http_requests_are_counted_by_view_name_on_metrics(client, settings, agents):
    """Count and latency by the URL pattern's name, beside the business metrics on one /metrics."""
    settings.METRICS_TOKEN = "kazan-9f2c"
    client.get(reverse("login"))
    client.get("/bu-adres-yok/")
    body = client.get(reverse("metrics"), headers={"Authorization": "Bearer kazan-9f2c"}).content.decode()
    assert 'insurehub_http_requests_total{method="GET",status="200",view="login"}' in body
    assert 'view="unmatched"' in body
    assert 'insurehub_http_request_duration_seconds_bucket{le="0.005",method="GET",view="login"}' in body
    assert "insurehub_insurer_attempts" in body  # the business metrics are still there


@pytest.mark.django_db
def test_a_line_logged_during_a_request_names_the_agency_looked_up_only_then(agents, rf, django_assert_num_queries):
    """The agency costs its queries only when a line is written; the request id is always there."""
    from django.http import HttpResponse

    from insurehub.log_context import RequestContextMiddleware

    lines: list[dict] = []

    def view(request):
        with django_assert_num_queries(0):
            quiet = log_context_bound()  # nothing logged yet: nothing looked up
            with quiet:
                pass
        lines.append(json.loads(JsonFormatter().format(record("teklif istendi"))))
        return HttpResponse("ok")

    request = rf.get("/", headers={"X-Request-ID": "req-9"})
    request.user = agents["ACENTE1"]
    response = RequestContextMiddleware(view)(request)
    assert response["X-Request-ID"] == "req-9"
    assert lines[0]["request_id"] == "req-9" and lines[0]["agency"] == "ACENTE1"
