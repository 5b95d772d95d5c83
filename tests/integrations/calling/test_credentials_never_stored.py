"""No credential of an endpoint reaches a stored text, even from an answer that echoes the request.

Insurers' error pages (a misconfigured gateway, a debug build) print the request they got:
Boğaziçi's password sits in the SOAP body, Çınar's `client_secret` in the token body, Anka's key
and Deniz's Basic pair in headers. The channel scrubs every credential of the endpoint, in every
form an echo writes it, from the attempt log's message and raw sample and from the error every
durable record is built from, before anything is cut.
"""

from __future__ import annotations

import html
import io
import json
from collections.abc import Callable, Iterable
from urllib.parse import quote, quote_plus

import pytest
import requests
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from requests.structures import CaseInsensitiveDict

from integrations.adapters.registry import adapter_class, registered_codes
from integrations.answers.taxonomy import InsurerError
from integrations.attempts.recording import MAX_RAW_SAMPLE, BufferedRecorder
from integrations.calling.calls import insurer_operation_run
from integrations.calling.channel import CallContext, Channel, secret_forms
from sandbox import DEFAULT_ACCOUNTS
from tests.samples import TRAFIK

pytestmark = pytest.mark.django_db

PROPERTY = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# The ways an echo may write a value: as sent, and escaped by HTML, XML, JSON, repr and URLs.
ECHOES: dict[str, Callable[[str], str]] = {
    "as sent": lambda value: value,
    "html": html.escape,
    "json": lambda value: json.dumps(value)[1:-1],
    "json-ascii": lambda value: json.dumps(value, ensure_ascii=True)[1:-1],
    "repr": lambda value: repr(value)[1:-1],
    "url": lambda value: quote(value, safe=""),
    "url-lower": lambda value: quote(value, safe="").lower() if "%" in quote(value, safe="") else value,
    "form": lambda value: quote_plus(value, safe=""),
}


def stored_texts(error: InsurerError | None, recorder: BufferedRecorder) -> list[str]:
    texts = [text for record in recorder.records for text in (record.message, record.raw_sample, record.provider_code)]
    if error is not None:
        texts += [error.message, error.raw_sample, error.provider_code, str(error)]
    return texts


def leaks(secret: str, texts: Iterable[str]) -> list[str]:
    """Texts that still hold `secret` in some form, or end in the head (four characters or more)
    of one: what a cut through it would have left."""
    forms = secret_forms(secret) | {echo(secret) for echo in ECHOES.values()}
    found = []
    for text in texts:
        if any(form in text for form in forms) or any(
            text.endswith(form[:size]) for form in forms for size in range(4, len(form))
        ):
            found.append(text)
    return found


class EchoSession(requests.Session):
    """An insurer whose every answer is an error page echoing the request it got (headers and
    body), plus the `extra` text at `lead` characters into the page: no network."""

    def __init__(self, *, status: int, content_type: str, lead: int, extra: str) -> None:
        super().__init__()
        self.status, self.content_type, self.lead, self.extra = status, content_type, lead, extra

    def send(self, request, **kwargs):
        body = request.body.decode("utf-8", "replace") if isinstance(request.body, bytes) else (request.body or "")
        headers = "".join(f"{name}: {value}\n" for name, value in request.headers.items())
        page = f"{'x' * self.lead}{self.extra} {request.method} {request.url}\n{headers}\n{body}\n{html.escape(body)}"
        response = requests.Response()
        response.status_code = self.status
        response.headers = CaseInsensitiveDict({"Content-Type": self.content_type})
        response.raw = io.BytesIO(page.encode("utf-8"))
        response.request = request
        return response


def run_trafik_quote(code: str, credentials: dict[str, str], session: requests.Session):
    recorder = BufferedRecorder()
    context = CallContext(insurer_code=code, operation="trafik_quote", attempt_timeout=2.0)
    cls = adapter_class(code)
    channel = Channel(
        base_url="http://127.0.0.1:9", context=context, recorder=recorder, error_table=cls.error_table, session=session
    )
    adapter = cls(channel=channel, credentials=credentials)
    try:
        adapter.trafik_quote(dict(TRAFIK))
    except InsurerError as error:
        return error, recorder
    return None, recorder


# A credential: printable, no spaces (an insurer's password or key), long enough to be scrubbed.
# No space of any kind: a no-break space (U+00A0, category Zs) leading a header value is refused
# by requests before anything is sent, so such a "credential" never reaches an echo at all.
credential_values = st.text(
    alphabet=st.characters(min_codepoint=33, max_codepoint=0x17F, exclude_categories=("Cs", "Cc", "Zs")),
    min_size=6,
    max_size=40,
)


@PROPERTY
@given(
    code=st.sampled_from(registered_codes()),
    data=st.data(),
    status=st.sampled_from([200, 400, 401, 500, 502]),
    content_type=st.sampled_from(["text/html; charset=utf-8", "application/json", "text/xml; charset=utf-8"]),
    lead=st.integers(0, MAX_RAW_SAMPLE + 100),
    echo=st.sampled_from(sorted(ECHOES)),
)
def test_no_credential_echoed_anywhere_in_an_answer_reaches_a_stored_text(code, data, status, content_type, lead, echo):
    """Any credential of any registered insurer's endpoint (its sample accounts' or any other),
    echoed in any form at any place of any kind of answer, is in no stored text."""
    cls = adapter_class(code)
    sample = dict(DEFAULT_ACCOUNTS[code][0]["credentials"])
    credentials = data.draw(
        st.one_of(
            st.just(sample),
            st.fixed_dictionaries({field: credential_values for field in cls.credential_fields}),
        ),
        label="credentials",
    )
    target = data.draw(st.sampled_from(sorted(credentials.values())), label="echoed")
    session = EchoSession(status=status, content_type=content_type, lead=lead, extra=ECHOES[echo](target))
    error, recorder = run_trafik_quote(code, credentials, session)
    texts = stored_texts(error, recorder)
    assert recorder.records, "the exchange was recorded"
    for value in credentials.values():
        assert leaks(value, texts) == [], (value, texts)


def test_a_text_cut_through_a_credential_loses_its_head_too():
    """A message an adapter cut before the channel saw it may end in half a password: gone."""
    channel = Channel(
        base_url="http://127.0.0.1:9",
        context=CallContext(insurer_code="bogazici", operation="trafik_quote"),
        recorder=BufferedRecorder(),
        error_table={},
    )
    channel.keep_secret("bogazici-pass-1")
    assert channel.scrubbed("Şifre hatalı: bogazici-pa", limit=500) == "Şifre hatalı: ***"
    assert channel.scrubbed("x" * 495 + "bogazici-pass-1", limit=500) == "x" * 495 + "***"


def test_a_user_and_password_in_the_address_are_scrubbed_as_well():
    """An address written with its user and password (the admin refuses it, an old row may hold it)."""
    channel = Channel(
        base_url="https://svc-user:svc-secret-9@api.example.com",
        context=CallContext(insurer_code="anka", operation="trafik_quote"),
        recorder=BufferedRecorder(),
        error_table={},
    )
    assert "svc-secret-9" not in channel.scrubbed("auth svc-user:svc-secret-9 refused", limit=500)


# --- against the real sandbox ----------------------------------------------------------------------------


def test_every_sandbox_insurer_echoing_the_request_leaves_no_credential_in_the_attempt_log(sandbox, endpoint_for):
    """Each registered sandbox insurer answers every call (Çınar's token call too) with an error
    page that echoes the request: the quote fails, and no credential is in anything kept."""
    for code, server in sandbox.items():
        server.state.add_faults(
            [{"operation": operation, "fault": "echo", "times": None} for operation in server.state.operations]
        )
        endpoint = endpoint_for(code)
        recorder = BufferedRecorder()
        outcome = insurer_operation_run(
            endpoint=endpoint,
            operation="trafik_quote",
            data=dict(TRAFIK),
            recorder=recorder,
            sleep=lambda seconds: None,
        )
        assert not outcome.ok, code
        assert server.state.counts()["faults"], f"{code}: the echo page was served"
        texts = stored_texts(outcome.error, recorder)
        # The page did echo the request: the scrub is what kept the credentials out.
        assert any("***" in text for text in texts), (code, texts)
        for value in endpoint.credentials.values():
            assert leaks(value, texts) == [], (code, value, texts)


def test_a_durable_record_built_from_an_echoing_answer_keeps_no_credential(seeded_accounts, sandbox):
    """The nightly sync's record of a policy whose status call got an echo page: its
    `error_message` and `raw_answer` are scrubbed like the attempt log."""
    from integrations.calling.calls import endpoint_for_account
    from integrations.models import Attempt, InsurerAccount
    from policies.models import Policy
    from sync.models import SyncItem, SyncRun
    from sync.services import sync_item_process

    for code in ("bogazici", "cinar"):
        account = InsurerAccount.objects.select_related("insurer", "agency").get(
            insurer__code=code, agency__code="ACENTE1"
        )
        server = sandbox[code]
        server.state.add_faults(
            [{"operation": operation, "fault": "echo", "times": None} for operation in server.state.operations]
        )
        policy = Policy.objects.create(
            agency=account.agency, insurer=account.insurer, account=account, product="trafik", policy_no=f"{code}-E-1"
        )
        run = SyncRun.objects.create(trigger=SyncRun.Trigger.COMMAND)
        item = SyncItem.objects.create(run=run, policy=policy, payload={"policy_no": policy.policy_no, "insurer": code})
        sync_item_process(item_id=item.pk)
        item.refresh_from_db()
        texts = [item.error_message, item.raw_answer]
        texts += [t for a in Attempt.objects.filter(insurer_code=code) for t in (a.message, a.raw_sample)]
        assert item.raw_answer, code
        for value in endpoint_for_account(account).credentials.values():
            assert leaks(value, texts) == [], (code, value, texts)
