"""Mask, then cut: no text the platform keeps or shows is shortened before its identity numbers are masked.

Two proofs. The product code is read for stray cuts (`text[:n]` on an f-string, `str(...)`, a
message): every one goes through `insurehub.masking.mask_and_cut`. And every raise site that
quotes a value into a cut message is driven with a TCKN/VKN at every position relative to the
cut, in every shape: no more than five of its digits in a row come out, neither in the exception
nor in what the channel keeps of it (the attempt log's message), nor in `work_try`'s record.
"""

from __future__ import annotations

import ast
import io
import logging
from collections.abc import Callable
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from xml.sax.saxutils import escape

import pytest
import requests
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from requests.structures import CaseInsensitiveDict

from integrations.adapters import base as adapter_base
from integrations.answers import coverages
from integrations.answers.results import Quote
from integrations.answers.taxonomy import InsurerError, Refusal
from integrations.attempts.recording import BufferedRecorder
from integrations.calling.channel import Call, CallContext, Channel, Reply
from integrations.insurers.bogazici.adapter import BogaziciAdapter
from integrations.insurers.deniz import adapter as deniz
from tests.insurehub.test_masking import identities, spaced, surviving_runs

# The channel reads the admin's error mappings when it classifies a refusal.
pytestmark = pytest.mark.django_db

REPO_ROOT = Path(__file__).resolve().parents[2]
PROPERTY = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# --- the product code holds no stray cut ---------------------------------------------------------------

# Packages that are not the product: the insurers' side, the benchmarks, the tests themselves.
NOT_PRODUCT = {"tests", "sandbox", "bench"}
# Names of values that hold free text (an answer, a message, a reason) wherever they appear.
TEXT_NAMES = {
    "message", "error_message", "raw_sample", "reason", "detail", "title", "note", "sample", "body", "status", "code",
    "provider_code", "text", "value",
}  # fmt: skip
# Cuts that are no free text, each with why.
ALLOWED_CUTS = {
    ("agencies/auth.py", "str(request.META.get('REMOTE_ADDR') or '')[:45]"): "an IP address, the column's width",
    ("quotes/admin.py", "str(payload['payment_token'])[-4:]"): "a card token's last four, shown on purpose",
    ("integrations/attempts/recording.py", "reason[:64]"): "the wait's reason: our own word (`settling`)",
    ("integrations/calling/channel.py", "repr(value)[1:-1]"): "a credential's repr, to scrub it in that form",
    ("integrations/calling/channel.py", "text[:limit + _SCRUB_WINDOW]"): "scrubbed, then mask_and_cut",
    ("integrations/calling/channel.py", "text[:-size]"): "a credential's head dropped at the end",
    ("integrations/calling/calls.py", "value[-4:]"): "an API key's last four, to name an ad-hoc account",
    ("integrations/insurers/bogazici/adapter.py", "reply.content[:256]"): "bytes sniffed for an HTML page, never kept",
    ("customers/erasure.py", "f'X{customer_pk:010d}'[-11:]"): "a placeholder made of a key, no input in it",
    ("quotes/services/comparison_pdf.py", "text[:limit - 1]"): "a name printed in a PDF cell, masked before",
    ("customers/views.py", "str(request.POST.get('q', ''))[:PICK_MAX_LENGTH]"): (
        "the customer box's search term, cut to the box's length for the query; never stored or shown"
    ),
    ("outreach/views.py", "selectors.customer_messages(customer=customer)[:HISTORY_LIMIT]"): "a queryset's first rows",
    ("outreach/views.py", "selectors.quote_request_messages(quote_request=quote_request)[:HISTORY_LIMIT]"): (
        "a queryset's first rows"
    ),
}


def _is_text(node: ast.AST) -> bool:
    if isinstance(node, ast.JoinedStr):
        return True
    if isinstance(node, ast.Call):
        func = node.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
        return name in {"str", "repr", "format", "join"} or "message" in name
    if isinstance(node, ast.BinOp):
        return _is_text(node.left) or _is_text(node.right)
    if isinstance(node, ast.IfExp):
        return _is_text(node.body) or _is_text(node.orelse)
    if isinstance(node, ast.Name):
        return node.id in TEXT_NAMES
    if isinstance(node, ast.Attribute):
        return node.attr in TEXT_NAMES
    return False


def _product_modules() -> list[Path]:
    packages = [
        path
        for path in REPO_ROOT.iterdir()
        if path.is_dir() and (path / "__init__.py").exists() and path.name not in NOT_PRODUCT
    ]
    return [
        module
        for package in packages
        for module in package.rglob("*.py")
        if "migrations" not in module.parts and module != REPO_ROOT / "insurehub" / "masking.py"
    ]


def test_no_product_code_cuts_a_text_except_through_mask_and_cut():
    """A `[:n]` on an f-string, a `str()` or a message would leave nine digits of a TCKN that the
    masking after it no longer recognises: every such cut is `mask_and_cut(text, n)`."""
    stray = []
    for module in _product_modules():
        relative = module.relative_to(REPO_ROOT).as_posix()
        for node in ast.walk(ast.parse(module.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice) and _is_text(node.value):
                if (relative, ast.unparse(node)) not in ALLOWED_CUTS:
                    stray.append(f"{relative}:{node.lineno}: {ast.unparse(node)}")
    assert stray == [], "cut through insurehub.masking.mask_and_cut instead:\n" + "\n".join(stray)


def test_the_guard_sees_a_stray_cut():
    """The reader above would catch the bug it guards against."""
    tree = ast.parse('raise ValueError(f"bad: {value!r}"[:200])')
    cuts = [n for n in ast.walk(tree) if isinstance(n, ast.Subscript) and _is_text(n.value)]
    assert len(cuts) == 1


# --- every raise site, an identity at any position relative to the cut ---------------------------------


class _CannedSession(requests.Session):
    """Answers every request with the same status and body, without a network."""

    def __init__(self, status: int, body: bytes, content_type: str) -> None:
        super().__init__()
        self.status, self.body, self.content_type = status, body, content_type

    def send(self, request, **kwargs):
        response = requests.Response()
        response.status_code = self.status
        response.headers = CaseInsensitiveDict({"Content-Type": self.content_type})
        response.raw = io.BytesIO(self.body)
        response.request = request
        return response


def _channel(session: requests.Session | None = None, code: str = "anka") -> tuple[Channel, BufferedRecorder]:
    recorder = BufferedRecorder()
    context = CallContext(insurer_code=code, operation="trafik_quote", attempt_timeout=2.0)
    channel = Channel(
        base_url="http://127.0.0.1:9",
        context=context,
        recorder=recorder,
        error_table={},
        session=session or _CannedSession(200, b"{}", "application/json"),
    )
    return channel, recorder


def _raised(action: Callable[[], object]) -> BaseException:
    try:
        action()
    except (ValueError, TypeError, ArithmeticError, Refusal, InsurerError) as exc:
        return exc
    raise AssertionError("the site did not raise")


NOW = datetime(2026, 12, 1, tzinfo=UTC)

# Each site as the code reaches it: given a text holding an identity, the exception it raises.
RAISE_SITES: dict[str, Callable[[str], BaseException]] = {
    "results: a text too long": lambda text: _raised(
        lambda: Quote(quote_no=text + "x" * 70, premium=Decimal(1), currency="TRY", valid_until=NOW)
    ),
    "results: a currency that is no ISO code": lambda text: _raised(
        lambda: Quote(quote_no="Q-1", premium=Decimal(1), currency=text, valid_until=NOW)
    ),
    "coverages: a limit that is no string": lambda text: _raised(lambda: coverages.coverage_limit([text])),
    "coverages: a limit that is no decimal": lambda text: _raised(lambda: coverages.coverage_limit(text)),
    "coverages: an entry without a code": lambda text: _raised(lambda: coverages.coverage_entry([text])),
    "coverages: an installment total that is no string": lambda text: _raised(
        lambda: coverages.installment_entry(2, [text])
    ),
    "coverages: an installment total that is no decimal": lambda text: _raised(
        lambda: coverages.installment_entry(2, text)
    ),
    "adapters: a premium that is no decimal": lambda text: _raised(lambda: adapter_base.parse_money(text)),
    "deniz: an amount in another currency": lambda text: _raised(
        lambda: deniz._money_amount({"amount": "1.00", "currency": text})
    ),
    "deniz: a document answer with a status of its own": lambda text: deniz._not_ready(
        Reply(202, CaseInsensitiveDict({"Content-Type": "application/json"}), _json_bytes({"status": text}))
    ),
}

# Sites whose value is a number alone (the check parses it first): the identity, negative, is all of it.
NUMBER_SITES: dict[str, Callable[[str], BaseException]] = {
    "coverages: a limit out of range": lambda number: _raised(lambda: coverages.coverage_limit("-" + number)),
    "coverages: an installment count out of range": lambda number: _raised(
        lambda: coverages.installment_entry("-" + number, "1")
    ),
    "coverages: an installment total out of range": lambda number: _raised(
        lambda: coverages.installment_entry(2, "-" + number)
    ),
    "adapters: a premium out of range": lambda number: _raised(lambda: adapter_base.parse_money("-" + number)),
}


def _json_bytes(value: object) -> bytes:
    import json

    return json.dumps(value).encode()


# Free text around the identity, without digits (any digit that comes out is the identity's) and
# without backslashes (one right before the digits would write an escape such as `\x00`) or control
# characters (no XML answer may hold them; test_masking covers them in plain text).
filler = st.text(alphabet=st.characters(exclude_characters="0123456789\\", exclude_categories=("Cs", "Cc")), max_size=8)


@st.composite
def texts_holding_an_identity(draw) -> tuple[str, str]:
    """An identity in any shape, with 0–320 characters before it: it lands before, across and
    after every cut the sites make (200, 300, 500)."""
    identity = draw(identities)
    lead = draw(st.integers(0, 320))
    text = "a" * lead + draw(filler) + "#" + draw(spaced(identity)) + "#" + draw(filler)
    return identity, text


@PROPERTY
@given(site=st.sampled_from(sorted(RAISE_SITES)), case=texts_holding_an_identity())
def test_no_raise_site_lets_most_of_an_identity_through(site, case):
    """Whatever the site quotes, and wherever the identity sits against its cut: at most five of
    the identity's digits in a row in what the channel keeps of it (the error, the attempt row)."""
    identity, text = case
    exc = RAISE_SITES[site](text)
    for kept in _kept_by_the_channel(exc):
        assert surviving_runs(identity, kept) == [], kept


@PROPERTY
@given(site=st.sampled_from(sorted(NUMBER_SITES)), identity=identities)
def test_no_raise_site_quoting_a_number_lets_the_identity_through(site, identity):
    """A site that checks a number quotes all of it: masked like any identity."""
    exc = NUMBER_SITES[site](identity)
    for kept in _kept_by_the_channel(exc):
        assert surviving_runs(identity, kept) == [], kept


def _kept_by_the_channel(exc: BaseException) -> list[str]:
    """What the attempt log and the error keep when an adapter's reader raises `exc`."""
    channel, recorder = _channel()

    def read(reply: Reply) -> None:
        raise exc

    with pytest.raises(InsurerError) as caught:
        channel.exchange(Call("POST", "/v1/quotes/trafik", json={}), read)
    error = caught.value
    [record] = recorder.records
    return [error.message, str(error), error.provider_code, record.message, record.raw_sample, record.provider_code]


@PROPERTY
@given(case=texts_holding_an_identity())
def test_a_bogazici_document_of_another_policy_is_reported_masked(case):
    """Boğaziçi's answer names another policy than the one asked for: the message quotes both,
    through the real adapter and channel, masked before its cut."""
    identity, text = case
    answer = (
        '<?xml version="1.0" encoding="utf-8"?>'
        '<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/" xmlns:b="urn:bogazici">'
        '<soap:Body><b:PoliceBasimResponse xmlns="urn:bogazici"><IslemSonuc>'
        f"<Basarili>true</Basarili><HataKodu/><HataMesaji/><PoliceNo>{escape(text)}</PoliceNo>"
        "<PdfIcerik>JVBERi0xLjQK</PdfIcerik></IslemSonuc></b:PoliceBasimResponse></soap:Body></soap:Envelope>"
    ).encode()
    channel, recorder = _channel(_CannedSession(200, answer, "text/xml; charset=utf-8"), code="bogazici")
    adapter = BogaziciAdapter(channel=channel, credentials={"username": "acente1", "password": "parola-123"})
    with pytest.raises(InsurerError) as caught:
        adapter.policy_document({"policy_no": "BG-P-1"})
    [record] = recorder.records
    for kept in (caught.value.message, record.message, record.raw_sample):
        assert surviving_runs(identity, kept) == [], kept


def _collision_limited_by(limit: object) -> dict:
    return coverages.coverage_entry("collision", limit=limit)


@PROPERTY
@given(case=texts_holding_an_identity())
def test_an_unreadable_coverage_is_logged_masked(case):
    """A coverage entry the platform cannot read is skipped and logged: the log line is masked
    before its cut too."""
    identity, text = case
    records: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    log = logging.getLogger("tests.mask_then_cut")
    handler = Keep()
    log.addHandler(handler)
    try:
        assert coverages.read_entries([text], _collision_limited_by, log=log, what="coverage") == []
    finally:
        log.removeHandler(handler)
    [record] = records
    assert surviving_runs(identity, record.getMessage()) == [], record.getMessage()


# --- work_try: a crash on our side -----------------------------------------------------------------------


def test_a_crash_on_our_side_is_kept_masked_wherever_the_identity_sits(seeded_accounts):
    """`work_try`'s PLATFORM_ERROR quotes our own exception, which may quote a payload: the
    record keeps it masked, then cut, with the identity before, across and after the cut."""
    from integrations.models import InsurerAccount
    from integrations.retry_policies import policy_for
    from policies.models import Policy
    from sync.models import SyncItem, SyncRun
    from work.services import WorkKind, work_claim, work_try

    account = InsurerAccount.objects.select_related("insurer", "agency").get(
        insurer__code="anka", agency__code="ACENTE1"
    )
    run = SyncRun.objects.create(trigger=SyncRun.Trigger.COMMAND)
    identity = "10000000146"
    prefix = len("RuntimeError: ")
    for lead in range(300 - prefix - len(identity) - 2, 300 - prefix + 2):
        policy = Policy.objects.create(
            agency=account.agency, insurer=account.insurer, account=account, product="trafik", policy_no=f"AK-M-{lead}"
        )
        item = SyncItem.objects.create(run=run, policy=policy, payload={"policy_no": policy.policy_no})

        def crash(item, permit, lead=lead):
            raise RuntimeError("a" * lead + identity + " in the payload")

        kind = WorkKind(model=SyncItem, call=crash, on_success=lambda item, outcome: None)
        assert work_claim(SyncItem, item.pk, lease_seconds=60)
        item.refresh_from_db()
        work_try(kind, item, insurer_code="anka", policy=policy_for("anka", "policy_status"))
        item.refresh_from_db()
        assert item.provider_code == "PLATFORM_ERROR"
        assert surviving_runs(identity, item.error_message) == [], (lead, item.error_message)
