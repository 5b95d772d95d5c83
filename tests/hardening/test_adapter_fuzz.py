"""Property-based fuzzing of every adapter's answer reading, through the real `Channel`.

A fake insurer at the transport layer (`fake_insurer.FakeInsurerTransport`) answers each request
with a hypothesis-drawn status, headers and body: pure garbage, JSON/SOAP of the right shape with
wrong values, lying `Content-Length`/`Content-Encoding`, wait signals of every form. Whatever it
says, an operation ends in a well-formed result or an `InsurerError` of the taxonomy; an answer
we could not read is `unknown` with its (masked) raw sample kept; and the attempt log holds
exactly one row per request the insurer received.
"""

from __future__ import annotations

import gzip
import importlib
import io
import json
import re
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from types import ModuleType
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from requests.structures import CaseInsensitiveDict
from stdnum.tr import vkn
from urllib3 import HTTPResponse

from insurehub.masking import raw_sample
from integrations.adapters.registry import adapter_class, forget_process_state, registered_codes
from integrations.answers.results import Address, Policy, PolicyStatus, Quote
from integrations.answers.taxonomy import KIND_CLASS, ErrorClass, ErrorKind, InsurerError
from integrations.attempts.recording import MAX_RAW_SAMPLE
from integrations.calling.channel import Reply
from tests import samples
from tests.hardening.fake_insurer import (
    Answer,
    FakeInsurerTransport,
    VirtualClock,
    adapter_over,
    adapter_sleeps_on,
)

pytestmark = pytest.mark.django_db

INSURERS = registered_codes()
OPERATIONS = (
    "trafik_quote",
    "kasko_quote",
    "dask_address",
    "dask_quote",
    "issue_policy",
    "policy_status",
    "find_issued_policy",
)
INPUT = {
    **samples.KASKO,
    **samples.DASK_ADDRESS,
    **samples.DASK_RISK,
    "building_id": "B-1",
    "quote_no": "Q-1",
    "payment_token": samples.PAYMENT_TOKEN,
    "policy_no": "P-1",
}
# A standalone 10- or 11-digit run: what an identity number looks like in free text. Eleven
# digits are always masked; ten only when they pass the VKN checksum (UAVT codes are ten digits).
IDENTITY_RUN = re.compile(r"(?<![0-9])[0-9]{10,11}(?![0-9])")
# Identity numbers insurers echo back (valid TCKN, valid VKN): the masking must catch them anywhere.
IDENTITIES = ["10000000146", "17291716060", "1234567890"]


FUZZ = settings(
    max_examples=40,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large],
)

# --- what an insurer may say --------------------------------------------------------------------

short_text = st.text(max_size=12)
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**20), max_value=10**20),
    st.floats(allow_nan=True, allow_infinity=True),
    short_text,
    st.sampled_from([*IDENTITIES, *(int(i) for i in IDENTITIES), 10000000146.5]),
)
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(short_text, inner, max_size=3),
    max_leaves=6,
)
money = st.one_of(
    st.decimals(allow_nan=False, allow_infinity=False, places=2, min_value=0, max_value=10**6).map(str),
    st.sampled_from(["1e400", "-5.00", "NaN", "Infinity", "1,234.50", "", "1" * 20 + ".00", "10000000146"]),
    json_values,
)
timestamps = st.one_of(
    st.datetimes(timezones=st.none() | st.timezones()).map(lambda d: d.isoformat()),
    st.sampled_from(["9999-12-31T23:59:59-01:00", "yarın", "", "2030-13-45", "0001-01-01T00:00:00+01:00"]),
    json_values,
)
error_codes = st.one_of(
    st.sampled_from(
        [
            "VALIDATION",
            "AUTH_INVALID",
            "RATE_LIMITED",
            "NOT_ELIGIBLE",
            "IDEMPOTENCY_MISMATCH",
            "VAL_PLAKA",
            "SYS_MAINTENANCE",
            "SYS_BUSY",
            "AUTH_TOKEN_EXPIRED",
            "BIZ_DUPLICATE_REQUEST",
            "TOO_MANY_REQUESTS",
            "DUPLICATE_REFERENCE",
            "UNDERWRITING_DECLINED",
            "BS-100",
            "BS-110",
            "BS-404",
            "BS-901",
            "BS-902",
            "E_INPUT",
            "E_SLOW_DOWN",
            "E_NOT_READY",
            "NEVER_SEEN_BEFORE",
        ]
    ),
    json_values,
)
# How a field of each name goes wrong; any other field gets any JSON value.
BROKEN_FIELD: dict[str, st.SearchStrategy] = {
    **dict.fromkeys(["premium", "prim", "amount", "BrutPrim", "SigortaBedeli"], money),
    **dict.fromkeys(["valid_until", "gecerlilik", "expires_at", "GecerlilikTarihi"], timestamps),
    **dict.fromkeys(["code", "errorCode", "HataKodu", "id"], error_codes),
    **dict.fromkeys(["expires_in", "retry_after_seconds", "TekrarDenemeSn"], st.one_of(st.just(-1), json_values)),
}


@dataclass(frozen=True)
class AnswerProfile:
    """How one insurer answers, for the fuzz: the kinds of answer a request can get (its success
    first) and one valid body per kind, which the fuzz then breaks. A SOAP insurer's samples also
    say how to write its envelope and which operation a request asked (`soap_envelope`,
    `soap_operation`)."""

    kinds: Callable[[Any], list[str]]
    templates: dict[str, dict[str, Any]]
    samples: ModuleType

    @property
    def soap(self) -> bool:
        return hasattr(self.samples, "soap_envelope")


def answer_profile(insurer_code: str) -> AnswerProfile:
    """The insurer's `answer_samples` module, found beside its adapter (its package), so that a
    new insurer brings its samples in its own package and nothing here lists the insurers. An
    insurer without one fails `test_every_registered_insurer_has_answer_samples` (and every
    fuzz test) rather than going unfuzzed."""
    package = adapter_class(insurer_code).__module__.rpartition(".")[0]
    samples = importlib.import_module(f"{package}.answer_samples")
    return AnswerProfile(kinds=samples.kinds, templates=samples.SAMPLES, samples=samples)


def answer_kinds(insurer_code: str, request: Any) -> list[str]:
    """The answer kinds this request can get, so most fuzzed answers reach deep into the reading."""
    return answer_profile(insurer_code).kinds(request)


@st.composite
def broken(draw: st.DrawFn, valid: Any, depth: int = 0) -> Any:
    """`valid` with up to three of its fields dropped or replaced, nested objects included."""
    if not isinstance(valid, dict) or not valid:
        return valid
    body = dict(valid)
    for key in draw(st.lists(st.sampled_from(sorted(valid)), max_size=3, unique=True)):
        action = draw(st.sampled_from(["drop", "replace", "recurse"]))
        if action == "drop":
            del body[key]
        elif action == "recurse" and isinstance(valid[key], dict | list) and depth < 2:
            inner = valid[key]
            body[key] = (
                [draw(broken(item, depth + 1)) for item in inner]
                if isinstance(inner, list)
                else draw(broken(inner, depth + 1))
            )
        else:
            body[key] = draw(BROKEN_FIELD.get(key, json_values))
    return body


@st.composite
def shaped_body(draw: st.DrawFn, insurer_code: str, request: Any, *, success_only: bool = False) -> bytes:
    """The insurer's own answer shape for this request (its success, mostly), with a few parts broken."""
    kinds = answer_kinds(insurer_code, request)
    kind = kinds[0] if success_only or draw(st.integers(0, 9)) < 6 else draw(st.sampled_from(kinds))
    profile = answer_profile(insurer_code)
    if profile.soap:
        result = draw(broken(profile.templates[kind]))
        operation = profile.samples.soap_operation(request) or profile.samples.DEFAULT_OPERATION
        if not success_only and draw(st.integers(0, 9)) == 0:
            operation = "BaskaIslem"
        fault = None
        if not success_only and draw(st.integers(0, 6)) == 0:
            fault = (draw(st.sampled_from(["soap:Server", "soap:Client.Auth", "x:Server", "Server", ""])), "hata")
        raw = not success_only and draw(st.integers(0, 4)) == 0
        return profile.samples.soap_envelope(operation, result, fault=fault, raw=raw)
    return json.dumps(draw(broken(profile.templates[kind])), allow_nan=True).encode()


XML_ATTACKS = [
    b'<?xml version="1.0"?><!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]><r>&x;</r>',
    b'<!DOCTYPE lolz [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">'
    b'<!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">]><soap:Envelope>&c;</soap:Envelope>',
    b'<!DOCTYPE r SYSTEM "http://127.0.0.1:9/evil.dtd"><r/>',
    b"<!doctype html><html><body>502 Bad Gateway</body></html>",
]

ok_statuses = st.sampled_from([200, 200, 200, 201, 202, 409])
error_statuses = st.one_of(
    st.sampled_from([400, 401, 403, 404, 408, 409, 429, 500, 502, 503, 504]),
    st.integers(min_value=100, max_value=599),
)
header_text = st.text(st.characters(min_codepoint=32, max_codepoint=126), max_size=30)
headers = st.fixed_dictionaries(
    {},
    optional={
        "Content-Type": st.one_of(
            st.sampled_from(
                ["application/json", "text/xml; charset=utf-8", "text/html", "text/plain", "application/problem+json"]
            ),
            header_text,
        ),
        "Retry-After": st.one_of(
            st.integers(-10, 10**6).map(str),
            st.sampled_from(["Wed, 21 Oct 2015 07:28:00 GMT", "Fri, 31 Dec 9999 23:59:59 GMT", "1e400", "nan", ""]),
            header_text,
        ),
        "X-RateLimit-Reset": st.one_of(
            st.integers(0, 2**40).map(str), st.sampled_from(["inf", "nan", "-1", "1e400", ""]), header_text
        ),
    },
)


@st.composite
def answers(draw: st.DrawFn, insurer_code: str, request: Any) -> Answer:
    """One answer: mostly the insurer's own shape with wrong parts, sometimes pure garbage."""
    kind = draw(st.sampled_from(["shaped", "shaped", "shaped", "shaped", "json", "text", "bytes", "attack", "empty"]))
    if kind == "shaped":
        body = draw(shaped_body(insurer_code, request))
    elif kind == "json":
        body = json.dumps(draw(json_values), allow_nan=True).encode()
    elif kind == "text":
        body = draw(st.text(max_size=200)).encode("utf-8", "surrogatepass")
    elif kind == "bytes":
        body = draw(st.binary(max_size=200))
    elif kind == "attack":
        body = draw(st.sampled_from(XML_ATTACKS))
    else:
        body = b""
    status = draw(ok_statuses) if kind == "shaped" and draw(st.booleans()) else draw(error_statuses | ok_statuses)
    answer_headers = dict(draw(headers))
    # Transport-level lies: a body compressed or not as labelled, a length that does not match.
    encoding = draw(st.sampled_from(["none"] * 6 + ["gzip", "deflate", "gzip-lie", "length-lie"]))
    if encoding == "gzip":
        body, answer_headers["Content-Encoding"] = gzip.compress(body), "gzip"
    elif encoding == "deflate":
        body, answer_headers["Content-Encoding"] = zlib.compress(body), "deflate"
    elif encoding == "gzip-lie":
        answer_headers["Content-Encoding"] = "gzip"
    elif encoding == "length-lie":
        answer_headers["Content-Length"] = str(len(body) + draw(st.integers(1, 50)))
    return Answer(status=status, headers=answer_headers, body=body)


@st.composite
def success_answers(draw: st.DrawFn, insurer_code: str, request: Any) -> Answer:
    """A 200 in the success shape with a few fields broken: what a buggy insurer release sends."""
    body = draw(shaped_body(insurer_code, request, success_only=True))
    return Answer(status=200, headers={"Content-Type": "application/json"}, body=body)


# --- invariants -----------------------------------------------------------------------------------


def run_operation(adapter: Any, operation: str) -> Any:
    if operation in ("issue_policy", "find_issued_policy"):
        return getattr(adapter, operation)(INPUT, reference="IH-FUZZ-1")
    return getattr(adapter, operation)(INPUT)


# A 10-digit run labelled as a DASK address code is an address, not a company: never masked.
LABELLED_UAVT = re.compile(r"(?:uavt_?code|uavt_?kodu|/addresses/)[\"'>:=\s]{0,4}[0-9]{10}", re.IGNORECASE)


def assert_no_identity(text: str) -> None:
    for run in IDENTITY_RUN.findall(LABELLED_UAVT.sub("", text or "")):
        assert len(run) == 10 and not vkn.is_valid(run), f"unmasked identity number in {text!r}"


def assert_well_formed_result(operation: str, result: Any) -> None:
    """A success is a complete, typed result: never a half-read answer passed off as one."""
    kinds: dict[str, type | tuple[type, ...]] = {
        "trafik_quote": Quote,
        "kasko_quote": Quote,
        "dask_quote": Quote,
        "dask_address": Address,
        "issue_policy": Policy,
        "policy_status": Policy,
        "find_issued_policy": (Policy, type(None)),
    }
    expected = kinds[operation]
    assert isinstance(result, expected)
    if isinstance(result, Quote):
        assert isinstance(result.premium, Decimal) and result.premium.is_finite() and result.premium >= 0
        assert result.valid_until.tzinfo is not None
        assert isinstance(result.quote_no, str) and isinstance(result.currency, str)
    if isinstance(result, Policy):
        assert isinstance(result.status, PolicyStatus) and isinstance(result.policy_no, str) and result.policy_no


# What the quote and policy tables hold (quotes.models): a result that does not fit is not a result.
PREMIUM_LIMIT = Decimal(10) ** (12 - 2)  # DecimalField(max_digits=12, decimal_places=2)
NOT_TEXT = re.compile(r"None|True|False|[\[{].*")


def assert_fits_storage(result: Any, *, literal_text: bool = False) -> None:
    """A success holds the insurer's own text, sized for our columns: never `str(None)` or `str({...})`.

    `literal_text`: the insurer's answers are text all through (XML), so an element that reads
    `[]` or `True` is what the insurer wrote, not a JSON value we turned into text."""

    def text(value: str, max_length: int) -> None:
        assert isinstance(value, str) and 0 < len(value) <= max_length, value
        if not literal_text:
            assert not NOT_TEXT.fullmatch(value), f"{value!r} is a JSON null/bool/container turned into text"

    if isinstance(result, Quote):
        text(result.quote_no, 64)
        text(result.currency, 3)
        assert result.premium < PREMIUM_LIMIT, result.premium
    elif isinstance(result, Policy):
        text(result.policy_no, 64)
    elif isinstance(result, Address):
        for value in (result.uavt_code, result.address, result.building_id):
            text(value, 300)


def assert_error_in_taxonomy(error: InsurerError, transport: FakeInsurerTransport, records: list) -> None:
    assert isinstance(error.kind, ErrorKind)
    assert error.error_class is KIND_CLASS[error.kind] and isinstance(error.error_class, ErrorClass)
    assert isinstance(error.provider_code, str) and error.provider_code
    assert_no_identity(error.raw_sample)
    assert_no_identity(error.message)
    assert_no_identity(str(error))
    if error.provider_code == "DEADLINE_EXCEEDED":
        return  # raised before sending: nothing was received, so nothing recorded
    last = records[-1]
    assert (last.error_kind, last.provider_code) == (error.kind.value, error.provider_code[:64])
    if error.http_status is not None and transport.exchanges:
        # The insurer's answer was read: an unknown outcome keeps what it said, masked.
        if error.error_class is ErrorClass.UNKNOWN:
            answer = transport.exchanges[-1].answer
            expected = Reply(answer.status, CaseInsensitiveDict(answer.headers), _decoded(answer)).sample()
            assert error.raw_sample == expected
    if error.provider_code == "MALFORMED_RESPONSE":
        assert error.kind is ErrorKind.UNCLASSIFIED


def _decoded(answer: Answer) -> bytes:
    """The body as urllib3 decodes it on a real connection: a truncated gzip stream (a lying
    `Content-Encoding` on a body too short to be anything) decodes to what was there, not an error."""
    response = HTTPResponse(
        body=io.BytesIO(answer.body), headers=dict(answer.headers), preload_content=False, decode_content=True
    )
    return response.read()


def assert_one_record_per_exchange(transport: FakeInsurerTransport, records: list) -> None:
    assert len(records) == len(transport.exchanges)
    for record, exchange in zip(records, transport.exchanges, strict=True):
        assert record.ok == (record.error_kind == "")
        if not record.ok:
            assert ErrorKind(record.error_kind).error_class.value == record.error_class
        assert record.http_status in (None, exchange.answer.status)
        assert_no_identity(record.raw_sample)
        assert_no_identity(record.message)
        assert len(record.raw_sample) <= MAX_RAW_SAMPLE + 200


# --- the properties -------------------------------------------------------------------------------


@pytest.mark.parametrize("insurer_code", INSURERS)
def test_every_registered_insurer_has_answer_samples(insurer_code):
    """A new adapter is fuzzed like the others: its package must bring its answer shapes (an
    error's among them), or it cannot join the registry unfuzzed."""
    profile = answer_profile(insurer_code)
    assert profile.templates and all(isinstance(body, dict) for body in profile.templates.values())
    assert "error" in profile.templates


@pytest.mark.parametrize("operation", OPERATIONS)
@pytest.mark.parametrize("insurer_code", INSURERS)
@FUZZ
@given(data=st.data())
def test_any_answer_ends_in_a_result_or_a_taxonomy_error(insurer_code, operation, data):
    """Whatever the insurer says, only a typed result or an `InsurerError` comes out, one record per call."""
    forget_process_state()  # a Çınar token cached by an earlier example would change the exchanges
    transport = FakeInsurerTransport(lambda request: data.draw(answers(insurer_code, request), label="answer"))
    # Deniz polls a PROCESSING request a few times within 3 s of virtual time: no wall-clock pause,
    # and the number of polls (so of draws) depends on the answers only.
    clock = VirtualClock(3.0)
    adapter, recorder = adapter_over(insurer_code, transport, operation=operation, clock=clock)
    try:
        with adapter_sleeps_on(clock, adapter):
            result = run_operation(adapter, operation)
    except InsurerError as error:
        transport.raise_harness_error()
        assert_error_in_taxonomy(error, transport, recorder.records)
    else:
        assert_well_formed_result(operation, result)
        # Anka and Çınar answer "not known" to a lookup without a call: re-sending is the question.
        assert not transport.exchanges or recorder.records[-1].ok
    assert_one_record_per_exchange(transport, recorder.records)


@pytest.mark.parametrize("insurer_code", INSURERS)
@FUZZ
@given(body=st.binary(min_size=1, max_size=400))
def test_garbage_body_is_unknown_with_its_sample_kept(insurer_code, body):
    """Bytes that are no answer at all, on a 200, are `unknown` with the body kept as the sample."""
    forget_process_state()
    transport = FakeInsurerTransport(lambda request: Answer(200, {"Content-Type": "application/json"}, body))
    adapter, recorder = adapter_over(insurer_code, transport, operation="trafik_quote")
    text = body.decode("utf-8", errors="replace")
    looks_readable = text.strip().startswith(("{", "[", "<", '"')) or text.strip()[:1].isdigit() or not text.strip()
    try:
        run_operation(adapter, "trafik_quote")
    except InsurerError as error:
        assert_error_in_taxonomy(error, transport, recorder.records)
        if not looks_readable:
            assert error.error_class is ErrorClass.UNKNOWN, (error.kind, error.provider_code)
            assert error.raw_sample == raw_sample(body, MAX_RAW_SAMPLE)
    assert_one_record_per_exchange(transport, recorder.records)


@pytest.mark.parametrize("insurer_code", INSURERS)
def test_answer_larger_than_the_cap_is_refused_unread(insurer_code):
    """A multi-megabyte answer is cut off at the cap: unknown, ambiguous, recorded once."""
    forget_process_state()
    transport = FakeInsurerTransport(lambda request: Answer(200, {}, b"[" * (3 * 1024 * 1024)))
    adapter, recorder = adapter_over(insurer_code, transport)
    with pytest.raises(InsurerError) as caught:
        run_operation(adapter, "trafik_quote")
    assert caught.value.provider_code == "RESPONSE_TOO_LARGE" and caught.value.error_class is ErrorClass.UNKNOWN
    assert caught.value.ambiguous
    assert_one_record_per_exchange(transport, recorder.records)


@pytest.mark.parametrize("insurer_code", INSURERS)
@FUZZ
@given(data=st.data())
def test_successful_answers_fit_what_the_platform_stores(insurer_code, data):
    """A quote read as a success holds text where text belongs, sized for the quote table."""
    forget_process_state()
    transport = FakeInsurerTransport(lambda request: data.draw(success_answers(insurer_code, request), label="answer"))
    adapter, _ = adapter_over(insurer_code, transport, operation="trafik_quote")
    try:
        result = run_operation(adapter, "trafik_quote")
    except InsurerError:
        transport.raise_harness_error()
        return
    assert_fits_storage(result, literal_text=answer_profile(insurer_code).soap)
