"""Security: production settings, CSRF, a login on every URL, secrets and identity numbers kept out of sight.

Production settings are checked in a subprocess (they are read once per process), with a long
random secret and a real Fernet key, exactly as a deployment would start.
"""

from __future__ import annotations

import base64
import json
import logging
import os
import re
import secrets
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from cryptography.fernet import Fernet
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.db import connection
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, resolve

from integrations.adapters.registry import forget_process_state
from integrations.answers.taxonomy import ErrorClass, InsurerError
from integrations.calling.calls import endpoint_for_account, insurer_operation_run
from integrations.models import Attempt, InsurerAccount
from quotes.models import Issuance
from sandbox import DEFAULT_ACCOUNTS
from tests import samples
from tests.conftest import api_as
from tests.hardening.fake_insurer import Answer, FakeInsurerTransport, adapter_over

REPO_ROOT = Path(__file__).resolve().parents[2]
IDENTITY = samples.TRAFIK["owner_id"]
IDENTITY_RUN = re.compile(r"(?<![0-9])[0-9]{10,11}(?![0-9])")


# --- production settings -------------------------------------------------------------------------


def production_env(tmp_path: Path, **overrides: str | None) -> dict[str, str]:
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "insurehub.settings.production",
        "DJANGO_SECRET_KEY": secrets.token_urlsafe(64),
        "INSUREHUB_CREDENTIALS_KEY": Fernet.generate_key().decode(),
        "DJANGO_ALLOWED_HOSTS": "insurehub.example",
        "INSURER_ALLOWED_HOSTS": ".anka.example,ws.bogazici.example",
        "INSUREHUB_VAR_DIR": str(tmp_path),
        "SITE_URL": "https://insurehub.example",
    }
    # The test process's own switches (the browser fixture allows async-unsafe ORM calls) stay out.
    for name in (
        "INSUREHUB_USE_TEST_DB",
        "DJANGO_DEBUG",
        "DATABASE_URL",
        "REDIS_URL",
        "PYTEST_CURRENT_TEST",
        "DJANGO_ALLOW_ASYNC_UNSAFE",
    ):
        env.pop(name, None)
    for name, value in overrides.items():
        if value is None:
            env.pop(name, None)
        else:
            env[name] = value
    return env


def run_python(env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, *args], cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=60, check=False
    )


def test_check_deploy_is_clean_with_production_settings(tmp_path):
    """`manage.py check --deploy` finds nothing, warnings included, with production settings."""
    result = run_python(production_env(tmp_path), "manage.py", "check", "--deploy", "--fail-level", "WARNING")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "System check identified no issues" in result.stdout


SETTINGS_DUMP = """
import json, django
django.setup()
from django.conf import settings as s
names = ["DEBUG", "SESSION_COOKIE_SECURE", "SESSION_COOKIE_HTTPONLY", "SESSION_COOKIE_SAMESITE",
         "SESSION_COOKIE_NAME", "CSRF_COOKIE_SECURE", "CSRF_COOKIE_HTTPONLY", "CSRF_COOKIE_SAMESITE",
         "CSRF_COOKIE_NAME", "SECURE_SSL_REDIRECT", "SECURE_HSTS_SECONDS", "SECURE_HSTS_INCLUDE_SUBDOMAINS",
         "SECURE_CONTENT_TYPE_NOSNIFF", "X_FRAME_OPTIONS", "SECURE_PROXY_SSL_HEADER", "SESSION_COOKIE_DOMAIN",
         "CSRF_COOKIE_DOMAIN", "ALLOWED_HOSTS", "MIDDLEWARE", "PASSWORD_HASHERS"]
print(json.dumps({n: getattr(s, n) for n in names}))
"""


def test_check_deploy_warns_when_no_insurer_host_is_allowed(tmp_path):
    """Without INSURER_ALLOWED_HOSTS every insurer call is refused: the deploy check says so first."""
    result = run_python(production_env(tmp_path, INSURER_ALLOWED_HOSTS=None), "manage.py", "check", "--deploy")
    assert "integrations.W001" in result.stdout + result.stderr


def test_production_cookies_and_transport_are_safe(tmp_path):
    """Cookies secure, HTTP-only and same-site under `__Host-` names; HTTPS forced; no DEBUG; CSRF on."""
    result = run_python(production_env(tmp_path), "-c", SETTINGS_DUMP)
    assert result.returncode == 0, result.stderr
    values = json.loads(result.stdout.strip().splitlines()[-1])
    assert values["DEBUG"] is False
    assert values["SESSION_COOKIE_SECURE"] and values["SESSION_COOKIE_HTTPONLY"]
    assert values["CSRF_COOKIE_SECURE"] and values["CSRF_COOKIE_HTTPONLY"]
    assert values["SESSION_COOKIE_SAMESITE"] in ("Lax", "Strict") and values["CSRF_COOKIE_SAMESITE"] in (
        "Lax",
        "Strict",
    )
    # __Host- cookies need Secure, Path=/ and no Domain; browsers refuse them otherwise.
    assert values["SESSION_COOKIE_NAME"].startswith("__Host-") and values["CSRF_COOKIE_NAME"].startswith("__Host-")
    assert values["SESSION_COOKIE_DOMAIN"] is None and values["CSRF_COOKIE_DOMAIN"] is None
    assert values["SECURE_SSL_REDIRECT"] and values["SECURE_HSTS_SECONDS"] >= 31536000
    assert values["SECURE_HSTS_INCLUDE_SUBDOMAINS"] and values["SECURE_CONTENT_TYPE_NOSNIFF"]
    assert values["X_FRAME_OPTIONS"] == "DENY"
    assert values["SECURE_PROXY_SSL_HEADER"] == ["HTTP_X_FORWARDED_PROTO", "https"]
    assert "django.middleware.csrf.CsrfViewMiddleware" in values["MIDDLEWARE"]
    assert "django.middleware.clickjacking.XFrameOptionsMiddleware" in values["MIDDLEWARE"]
    assert values["ALLOWED_HOSTS"] == ["insurehub.example"]
    assert not any("MD5" in hasher for hasher in values["PASSWORD_HASHERS"])


@pytest.mark.parametrize(
    "overrides",
    [
        {"DJANGO_SECRET_KEY": None},
        {"DJANGO_SECRET_KEY": "short-and-guessable"},
        {"INSUREHUB_CREDENTIALS_KEY": None},
        {"INSUREHUB_CREDENTIALS_KEY": "not-a-fernet-key"},
    ],
    ids=["no-secret", "short-secret", "no-credentials-key", "malformed-credentials-key"],
)
def test_production_refuses_to_start_without_real_secrets(tmp_path, overrides):
    """A missing or weak secret, or a credentials key that is not a Fernet key, stops start-up."""
    result = run_python(production_env(tmp_path, **overrides), "manage.py", "check")
    assert result.returncode != 0
    assert "ImproperlyConfigured" in result.stderr


# --- CSRF ----------------------------------------------------------------------------------------


@pytest.fixture
def quoted_row(agents):
    """A request of ACENTE1 with a successful quote row, stored directly (no insurer call needed)."""
    from tests.hardening.test_isolation_matrix import agency_objects

    return agency_objects(agents["ACENTE1"])


@pytest.mark.django_db
def test_every_form_carries_a_csrf_token(agents, quoted_row):
    """The login page, the three quote forms and the issuance confirmation all render a CSRF token."""
    anonymous = Client(enforce_csrf_checks=True)
    assert b"csrfmiddlewaretoken" in anonymous.get("/giris/").content
    agent = Client(enforce_csrf_checks=True)
    agent.force_login(agents["ACENTE1"])
    pages = [f"/teklif/yeni/{product}/" for product in ("trafik", "kasko", "dask")]
    pages.append(f"/teklifler/{quoted_row.quote.pk}/policelestir/")
    for page in pages:
        response = agent.get(page)
        assert response.status_code == 200, page
        assert b"csrfmiddlewaretoken" in response.content, page


@pytest.mark.django_db
def test_forms_refuse_a_post_without_the_csrf_token(agents, quoted_row):
    """A cross-site POST (no token) to login, a quote form, issuance or logout is refused with 403."""
    anonymous = Client(enforce_csrf_checks=True)
    assert anonymous.post("/giris/", {"username": "ajan-acente1", "password": "test-pass-123"}).status_code == 403
    agent = Client(enforce_csrf_checks=True)
    agent.force_login(agents["ACENTE1"])
    before = (Issuance.objects.count(), quoted_row.request.__class__.objects.count())
    assert agent.post("/teklif/yeni/trafik/", samples.TRAFIK).status_code == 403
    confirm = f"/teklifler/{quoted_row.quote.pk}/policelestir/"
    assert agent.post(confirm, {"payment_token": samples.PAYMENT_TOKEN}).status_code == 403
    assert agent.post("/cikis/").status_code == 403
    assert (Issuance.objects.count(), quoted_row.request.__class__.objects.count()) == before
    # The same POST with the token goes through: the 403s were CSRF, not something else.
    agent.get(confirm)
    token = agent.cookies["csrftoken"].value
    form = {"payment_token": samples.PAYMENT_TOKEN, "overlap": "cancel_old", "csrfmiddlewaretoken": token}
    response = agent.post(confirm, form)
    assert response.status_code == 302 and Issuance.objects.count() == before[0] + 1


# --- a login on every URL ------------------------------------------------------------------------

# The only pages an anonymous visitor may reach: the two login pages, the two logouts (POST, and
# harmless without a session) and the API token exchange (it takes a password).
# The favicon is the only page that is public on purpose: a redirect to a static file.
# csp_report: browsers send Content-Security-Policy reports with no session or token (it only logs
# and counts; console/csp_reports.py caps what it reads).
# offer_public, offer_public_pdf: the offer link sent to a customer by SMS opens without a login;
# its signed, expiring token is the key (outreach/services/offer.py), and it names no one.
PUBLIC = {
    "login",
    "logout",
    "admin:login",
    "admin:logout",
    "api:auth-token",
    "favicon",
    "csp_report",
    "offer_public",
    "offer_public_pdf",
}
SAMPLE_BY_CONVERTER = {
    "int": "1",
    "str": "x1",
    "slug": "trafik",
    "uuid": "00000000-0000-4000-8000-000000000000",
    "path": "1",
}


def _route_sample(route: str) -> str:
    return re.sub(r"<(?:(\w+):)?\w+>", lambda m: SAMPLE_BY_CONVERTER[m.group(1) or "str"], route)


def _regex_sample(regex: str) -> str:
    def group(match: re.Match) -> str:
        body = match.group(2)
        if body in (".*", ".+"):
            return "nowhere/"
        return body.split("|")[0] if re.fullmatch(r"[\w|]+", body) else "1"

    return re.sub(r"\(\?P<(\w+)>([^)]*)\)", group, regex).lstrip("^").rstrip("$")


def url_samples() -> Iterator[tuple[str, str]]:
    """(name, concrete path) for every pattern in the project's URLconf, nested includes walked."""

    def walk(patterns, prefix: str, namespace: str) -> Iterator[tuple[str, str, object]]:
        for pattern in patterns:
            pattern_text = str(pattern.pattern)
            is_regex = pattern.pattern.__class__.__name__ == "RegexPattern"
            piece = _regex_sample(pattern_text) if is_regex else _route_sample(pattern_text)
            if isinstance(pattern, URLResolver):
                inner = f"{namespace}{pattern.namespace}:" if pattern.namespace else namespace
                yield from walk(pattern.url_patterns, prefix + piece, inner)
            elif isinstance(pattern, URLPattern):
                yield f"{namespace}{pattern.name or pattern_text}", "/" + prefix + piece, pattern.callback

    for name, path, callback in walk(get_resolver().url_patterns, "", ""):
        # The sample must reach the very view it was made for, or the check below proves nothing.
        assert resolve(path).func == callback, (name, path)
        yield name, path


def test_the_url_walk_covers_the_desk_the_api_and_the_admin():
    names = {name for name, _ in url_samples()}
    assert {"home", "quote_request_detail", "issuance_confirm", "policy_list"} <= names
    assert {"api:quote-requests", "api:issuance-detail", "api:schema", "api:docs"} <= names
    assert {"admin:index", "admin:integrations_insureraccount_change", "admin:quotes_issuance_changelist"} <= names


@pytest.mark.django_db
@pytest.mark.parametrize("method", ["get", "post"])
def test_every_url_requires_a_login(method):
    """Anonymous GET/POST to every URL pattern: a redirect to a login page, or 401/403.

    A POST may also meet 405 (a GET-only page refusing the method before anything runs); the GET
    pass checks that same page for a login.
    """
    client = Client()
    refused = []
    for name, path in url_samples():
        if name in PUBLIC:
            continue
        response = getattr(client, method)(path)
        location = response.headers.get("Location", "")
        if response.status_code in (301, 302) and location.startswith(("/giris/", "/admin/login/")):
            continue
        if response.status_code in (401, 403) or (method == "post" and response.status_code == 405):
            continue
        refused.append((name, path, response.status_code, location))
    assert refused == []


@pytest.mark.django_db
def test_agent_is_not_let_into_staff_pages(agents):
    """An agent (not staff) gets no admin page, no operations dashboard and no metrics."""
    client = Client()
    client.force_login(agents["ACENTE1"])
    checked = 0
    for name, path in url_samples():
        if name in PUBLIC or not (path.startswith("/admin/") or name in ("metrics", "integrations_health")):
            continue
        response = client.get(path)
        redirected = response.status_code == 302 and response["Location"].startswith(("/admin/login/", "/giris/"))
        assert redirected or response.status_code in (401, 403, 404), (name, path, response.status_code)
        checked += 1
    assert checked > 50


# --- insurer credentials -------------------------------------------------------------------------


def every_secret() -> list[str]:
    """Every stored credential value, and Deniz's Basic header built from them."""
    values = []
    for code, accounts in DEFAULT_ACCOUNTS.items():
        for account in accounts:
            credentials = account["credentials"]
            values += [v for k, v in credentials.items() if k in ("api_key", "password", "client_secret")]
            if code == "deniz":
                pair = f"{credentials['username']}:{credentials['password']}".encode()
                values.append(base64.b64encode(pair).decode())
    return values


def assert_no_secret(text: str, where: str) -> None:
    for secret in every_secret():
        assert secret not in text, f"credential {secret[:4]}… appears in {where}"


@pytest.mark.django_db
def test_credentials_are_encrypted_at_rest(seeded_accounts):
    """The database row holds a Fernet token: no secret in it, and another key cannot read it."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT credentials_encrypted FROM integrations_insureraccount")
        stored = [row[0] for row in cursor.fetchall()]
    assert stored and all(value.startswith("gAAAAA") for value in stored)  # Fernet's version byte
    assert_no_secret("\n".join(stored), "the insureraccount table")
    account = InsurerAccount.objects.select_related("insurer").get(insurer__code="anka", agency__code="ACENTE1")
    assert account.get_credentials() == DEFAULT_ACCOUNTS["anka"][0]["credentials"]
    with pytest.raises(Exception):  # noqa: B017 - InvalidToken: the ciphertext is bound to our key
        Fernet(Fernet.generate_key()).decrypt(account.credentials_encrypted.encode())


@pytest.fixture
def superuser_client(db) -> Client:
    user = get_user_model().objects.create_superuser("yonetici", "yonetici@example.com", "test-pass-123")
    client = Client()
    client.force_login(user)
    return client


@pytest.mark.django_db
def test_admin_pages_never_show_credentials(seeded_accounts, superuser_client, sandbox):
    """Account list, change and add pages, the attempt log and issuances show no secret and no ciphertext."""
    for account in seeded_accounts[:2]:
        insurer_operation_run(endpoint=endpoint_for_account(account), operation="trafik_quote", data=samples.TRAFIK)
    pages = ["/admin/integrations/insureraccount/", "/admin/integrations/insureraccount/add/"]
    pages += [f"/admin/integrations/insureraccount/{account.pk}/change/" for account in seeded_accounts]
    pages += ["/admin/integrations/attempt/", f"/admin/integrations/attempt/{Attempt.objects.first().pk}/change/"]
    pages += ["/admin/quotes/issuance/", "/admin/?q=api_key"]
    for page in pages:
        response = superuser_client.get(page)
        assert response.status_code == 200, page
        html = response.content.decode()
        assert_no_secret(html, page)
        for account in seeded_accounts:
            assert account.credentials_encrypted not in html, page


@pytest.mark.django_db
def test_credentials_never_reach_logs_errors_or_attempt_rows(seeded_accounts, sandbox, caplog):
    """Successful calls, refusals, garbage and bad credentials: no secret in logs, errors or the attempt log."""
    caplog.set_level(logging.DEBUG)
    for name in ("urllib3", "integrations", "django", "quotes"):
        caplog.set_level(logging.DEBUG, logger=name)
    faults = {
        "anka": {"fault": "error", "code": "AUTH_INVALID"},
        "bogazici": {"fault": "garbage"},
        "cinar": {"fault": "html"},
        "deniz": {"fault": "error", "code": "INVALID_REQUEST"},
    }
    outcomes = []
    for account in seeded_accounts:
        code = account.insurer.code
        forget_process_state()
        endpoint = endpoint_for_account(account)
        outcomes.append(insurer_operation_run(endpoint=endpoint, operation="trafik_quote", data=samples.TRAFIK))
        fault = faults.get(code, {"fault": "html"})  # any other registered insurer: a gateway page
        sandbox[code].state.add_faults([{"operation": "trafik_quote", "times": 1, **fault}])
        outcomes.append(insurer_operation_run(endpoint=endpoint, operation="trafik_quote", data=samples.TRAFIK))
        sandbox[code].state.clear_faults()
    # Wrong credentials: the insurer's refusal and our error must not echo what was sent.
    from integrations.calling.calls import Endpoint

    for code, accounts in DEFAULT_ACCOUNTS.items():
        wrong = {k: f"{v}-wrong" for k, v in accounts[0]["credentials"].items()}
        forget_process_state()
        outcome = insurer_operation_run(
            endpoint=Endpoint(insurer_code=code, base_url=sandbox[code].base_url, credentials=wrong),
            operation="trafik_quote",
            data=samples.TRAFIK,
        )
        assert not outcome.ok and outcome.error.error_class is ErrorClass.PERMANENT
        outcomes.append(outcome)
        assert_no_secret(json.dumps(outcome.to_json(), default=str), f"{code} outcome")
        for value in wrong.values():
            assert value not in caplog.text and value not in str(outcome.error)
    for outcome in outcomes:
        assert_no_secret(json.dumps(outcome.to_json(), default=str), "an outcome")
        if outcome.error is not None:
            assert_no_secret(str(outcome.error) + repr(outcome.error), "an error")
    assert_no_secret(caplog.text, "the logs")
    rows = list(Attempt.objects.values())
    assert len(rows) >= 12
    assert_no_secret(json.dumps(rows, default=str), "the attempt log")


@pytest.mark.django_db
def test_the_probe_prints_no_credentials(seeded_accounts, sandbox, capsys):
    """`manage.py insurer_call` prints its JSON outcome without the stored account's secrets."""
    for code in DEFAULT_ACCOUNTS:
        forget_process_state()
        try:
            call_command(
                "insurer_call", code, "trafik_quote", "--data", json.dumps(samples.TRAFIK), "--agency", "ACENTE1"
            )
        except SystemExit:  # exit status 1 on a failed call: the output is what matters here
            pass
    captured = capsys.readouterr()
    assert '"status"' in captured.out
    assert_no_secret(captured.out + captured.err, "the probe's output")


# --- identity numbers (KVKK) ---------------------------------------------------------------------


@pytest.mark.django_db
def test_identity_numbers_are_masked_in_attempt_rows_and_logs_after_real_calls(seeded_accounts, sandbox, caplog):
    """Real sandbox calls carrying a TCKN, refused or answered: the number is in no attempt row or log line."""
    caplog.set_level(logging.DEBUG)
    caplog.set_level(logging.DEBUG, logger="integrations")
    bad_identity = "12345678901"  # fails the TCKN checksum: every insurer refuses it in its own words
    for account in seeded_accounts:
        forget_process_state()
        endpoint = endpoint_for_account(account)
        for data in (samples.TRAFIK, {**samples.TRAFIK, "owner_id": bad_identity}):
            insurer_operation_run(endpoint=endpoint, operation="trafik_quote", data=data)
        insurer_operation_run(endpoint=endpoint, operation="dask_quote", data={**samples.DASK_RISK, "uavt_code": "1"})
    refused = Attempt.objects.filter(error_class=ErrorClass.PERMANENT.value)
    assert refused.exists()
    text = json.dumps(list(Attempt.objects.values()), default=str) + caplog.text
    for number in (IDENTITY, bad_identity, samples.DASK_RISK["owner_id"]):
        assert number not in text


@pytest.mark.django_db
def test_identity_numbers_are_masked_in_lists_and_pages(agents, quoted_row):
    """Web list and detail pages and the API show `100******46`, never the whole number."""
    web = Client()
    web.force_login(agents["ACENTE1"])
    api = api_as(agents["ACENTE1"])
    request_id = quoted_row.request.public_id
    for response in (
        web.get("/talepler/"),
        web.get(f"/talepler/{request_id}/"),
        web.get(f"/talepler/{request_id}/sonuclar/"),
        web.get("/policeler/"),
        api.get("/api/quote-requests/"),
        api.get(f"/api/quote-requests/{request_id}/"),
        api.get("/api/policies/"),
    ):
        assert response.status_code == 200
        assert IDENTITY not in response.content.decode()
    assert "100******46" in api.get(f"/api/quote-requests/{request_id}/").content.decode()


# --- XML external entities and entity expansion (Boğaziçi) ---------------------------------------

XML_ATTACKS = {
    "external-entity-file": b'<?xml version="1.0"?><!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]>'
    b'<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body>&x;</soap:Body>'
    b"</soap:Envelope>",
    "external-entity-url": b'<!DOCTYPE r [<!ENTITY x SYSTEM "http://127.0.0.1:9/leak">]><r>&x;</r>',
    "parameter-entity": b'<!DOCTYPE r [<!ENTITY % p SYSTEM "file:///etc/passwd"> %p;]><r/>',
    "external-dtd": b'<!DOCTYPE r SYSTEM "file:///etc/passwd"><r/>',
    "billion-laughs": b'<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">'
    + b"".join(
        f'<!ENTITY lol{i} "{("&lol" + (str(i - 1) if i > 1 else "") + ";") * 10}">'.encode() for i in range(1, 10)
    )
    + b"]><lolz>&lol9;</lolz>",
    "quadratic-blowup": b'<!DOCTYPE r [<!ENTITY a "' + b"x" * 50_000 + b'">]><r>' + b"&a;" * 5_000 + b"</r>",
}


@pytest.mark.django_db
@pytest.mark.parametrize("status", [200, 500])
@pytest.mark.parametrize("attack", sorted(XML_ATTACKS))
def test_bogazici_refuses_xml_entities_unread(attack, status):
    """A DTD, external entity or entity bomb in an answer is refused before a single entity is expanded."""
    body = XML_ATTACKS[attack]
    transport = FakeInsurerTransport(lambda request: Answer(status, {"Content-Type": "text/xml"}, body))
    adapter, recorder = adapter_over("bogazici", transport)
    started = time.perf_counter()
    with pytest.raises(InsurerError) as caught:
        adapter.trafik_quote(samples.TRAFIK)
    assert time.perf_counter() - started < 1.0  # nothing was expanded
    error = caught.value
    assert error.provider_code == "XML_REFUSED" and error.error_class is ErrorClass.UNKNOWN
    assert error.raw_sample  # kept for whoever looks into it, as sent (never expanded)
    record = recorder.records[-1]
    assert (record.provider_code, record.error_class) == ("XML_REFUSED", "unknown")
    for text in (error.message, error.raw_sample, record.message, record.raw_sample):
        assert "root:" not in text and "lollol" not in text


@pytest.mark.django_db
def test_xml_refusal_during_issuance_is_ambiguous(sandbox):
    """An XML bomb answering Policelestir may hide a done deed: the issuance must look before re-sending."""
    transport = FakeInsurerTransport(lambda request: Answer(200, {}, XML_ATTACKS["billion-laughs"]))
    adapter, _ = adapter_over("bogazici", transport, operation="issue_policy")
    with pytest.raises(InsurerError) as caught:
        adapter.issue_policy({"quote_no": "BG-T-1", "payment_token": samples.PAYMENT_TOKEN}, reference="IH-X")
    assert caught.value.provider_code == "XML_REFUSED" and caught.value.ambiguous
