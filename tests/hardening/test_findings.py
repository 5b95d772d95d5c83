"""Bugs the hardening suite found, each kept as its smallest example so it stays fixed."""

from __future__ import annotations

import json
import re

import pytest

from integrations.adapters.registry import forget_process_state
from integrations.answers.taxonomy import ErrorClass, InsurerError
from integrations.insurers.bogazici.adapter import BS_NS, SOAP_NS
from tests import samples
from tests.hardening.fake_insurer import Answer, FakeInsurerTransport, adapter_over

pytestmark = pytest.mark.django_db

IDENTITY_RUN = re.compile(r"(?<![0-9])[0-9]{10,11}(?![0-9])")


def answering(body: bytes | str, status: int = 200) -> FakeInsurerTransport:
    content = body.encode() if isinstance(body, str) else body
    return FakeInsurerTransport(lambda request: Answer(status, {"Content-Type": "application/json"}, content))


def test_malformed_answer_message_masks_identity_numbers():
    """An unreadable answer echoing a TCKN keeps it out of the error message and the attempt row (KVKK)."""
    envelope = (
        f'<soap:Envelope xmlns:soap="{SOAP_NS}" xmlns:b="{BS_NS}"><soap:Body><b:PoliceSorguResponse><b:IslemSonuc>'
        "<b:Basarili>true</b:Basarili><b:PoliceNo>BG-P-1</b:PoliceNo><b:Durum>17291716060</b:Durum>"
        "</b:IslemSonuc></b:PoliceSorguResponse></soap:Body></soap:Envelope>"
    )
    adapter, recorder = adapter_over("bogazici", answering(envelope), operation="policy_status")
    with pytest.raises(InsurerError) as caught:
        adapter.policy_status({"policy_no": "BG-P-1"})
    assert caught.value.provider_code == "MALFORMED_RESPONSE"
    # Today: "ValueError: unknown policy status '17291716060'", in Attempt.message and str(error).
    assert not IDENTITY_RUN.search(caught.value.message)
    assert not IDENTITY_RUN.search(recorder.records[-1].message)


QUOTE_ANSWERS = {
    "anka": {"quote_no": "AK-T-1", "premium": "1234.50", "currency": "TRY", "valid_until": "2030-01-01T00:00:00Z"},
    "cinar": {
        "success": True,
        "data": {"teklif_no": "CN-T-1", "prim": "1234.50", "para_birimi": "TRY", "gecerlilik": "2030-01-01T00:00:00Z"},
    },
    "deniz": {
        "quote_id": "DZ-Q-1",
        "gross_premium": {"amount": "1234.50", "currency": "TRY"},
        "expires_at": "2030-01-01T00:00:00Z",
    },
}
CURRENCY_FIELD = {"anka": ("currency",), "cinar": ("data", "para_birimi"), "deniz": ("gross_premium", "currency")}
QUOTE_NO_FIELD = {"anka": ("quote_no",), "cinar": ("data", "teklif_no"), "deniz": ("quote_id",)}


def quote_answer_with(insurer_code: str, path: tuple[str, ...], value: object) -> str:
    answer = json.loads(json.dumps(QUOTE_ANSWERS[insurer_code]))
    target = answer
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return json.dumps(answer)


def token_then(body: str) -> FakeInsurerTransport:
    """Çınar needs a token first; every other request gets `body`."""
    token = json.dumps({"access_token": "tok-1", "expires_in": 300}).encode()
    return FakeInsurerTransport(
        lambda request: Answer(200, {}, token if request.path_url.endswith("/token") else body.encode())
    )


@pytest.mark.parametrize(
    ("insurer_code", "field", "value"),
    [
        ("anka", CURRENCY_FIELD["anka"], None),
        ("anka", QUOTE_NO_FIELD["anka"], None),
        ("cinar", CURRENCY_FIELD["cinar"], None),
        ("cinar", QUOTE_NO_FIELD["cinar"], {"no": 1}),
        ("deniz", CURRENCY_FIELD["deniz"], None),
        ("deniz", QUOTE_NO_FIELD["deniz"], None),
        # Fits no column: InsurerQuote.currency is max_length=3 (PostgreSQL refuses the row).
        ("anka", CURRENCY_FIELD["anka"], "TRYL"),
    ],
)
def test_quote_with_a_field_that_is_not_its_text_is_unknown(insurer_code, field, value):
    """A quote whose number or currency is null, an object or too long is an unknown answer, not a quote."""
    forget_process_state()
    adapter, _ = adapter_over(insurer_code, token_then(quote_answer_with(insurer_code, field, value)))
    # Today: Quote(quote_no='None' / currency='None' / currency='TRYL') comes back as a success.
    with pytest.raises(InsurerError) as caught:
        adapter.trafik_quote(samples.TRAFIK)
    assert caught.value.error_class is ErrorClass.UNKNOWN


@pytest.mark.parametrize("insurer_code", ["anka", "cinar", "deniz"])
def test_premium_beyond_the_quote_column_is_unknown(insurer_code):
    """A premium of 10^10 TRY or more cannot be stored (max_digits=12): it is an unreadable answer."""
    forget_process_state()
    premium_field = {"anka": ("premium",), "cinar": ("data", "prim"), "deniz": ("gross_premium", "amount")}
    body = quote_answer_with(insurer_code, premium_field[insurer_code], "12345678901.00")
    adapter, _ = adapter_over(insurer_code, token_then(body))
    with pytest.raises(InsurerError):
        adapter.trafik_quote(samples.TRAFIK)


def test_token_with_a_line_break_records_no_call_that_was_never_sent():
    """Çınar's token lands in a header; a CR/LF in it stops the call before sending: no attempt row, not ambiguous."""
    forget_process_state()
    token = json.dumps({"access_token": "tok\r\nX-Evil: 1", "expires_in": 300}).encode()
    transport = FakeInsurerTransport(lambda request: Answer(200, {}, token))
    adapter, recorder = adapter_over("cinar", transport, operation="issue_policy")
    with pytest.raises(InsurerError) as caught:
        adapter.issue_policy({"quote_no": "CN-T-1", "payment_token": "tok"}, reference="IH-1")
    # Today: 2 attempt rows for 1 request received, the second "CONNECTION/INCOMPLETE_RESPONSE", ambiguous.
    assert len(recorder.records) == len(transport.exchanges)
    assert not caught.value.ambiguous
