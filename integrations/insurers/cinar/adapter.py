"""Çınar Sigorta: JSON with application errors inside HTTP 200, behind a bearer-token gateway.

Three quirks shape this adapter:

* Every answer from Çınar itself is HTTP 200; `success: false` plus an `errorCode` is the "no".
  Only the gateway in front of it speaks in HTTP statuses: 503 with `Retry-After` as an
  HTTP-date is its throttle signal, 502/504 with an HTML page mean the backend is down or slow.
* Calls need a short-lived bearer token. Tokens are cached per process and per client, and
  `AUTH_TOKEN_EXPIRED` is answered by fetching a new token and sending the same call once more,
  inside the adapter: the contract says this is not a retry, so the engine never sees it.
* Issuance carries our reference as `request_ref`, which Çınar deduplicates: a repeat answers
  `BIZ_DUPLICATE_REQUEST` with the policy the first send created. Re-sending is therefore the
  way to ask for the state after an ambiguous failure, and a duplicate is a success.

Çınar writes policy periods day.month.year (`"baslangic": "01.12.2026"`), sends a policy's PDF
base64 inside the JSON envelope (`police-pdf`), and says "not printed yet" with `DOC_NOT_READY`
plus `data.retry_after_seconds`: a wait it asks for, like SYS_MAINTENANCE's, never a failure.
"""

from __future__ import annotations

import base64
import logging
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from insurehub.masking import mask_and_cut
from integrations.adapters.base import (
    InsurerAdapter,
    json_body,
    parse_answer_date,
    parse_listed_date,
    parse_money,
    parse_policy_date,
    parse_utc,
    status_refusal,
    text,
    wire_date,
    wire_terms,
    wire_word,
)
from integrations.adapters.registry import register
from integrations.answers.coverages import coverage_entry, installment_entry, read_entries
from integrations.answers.results import (
    Address,
    Cancellation,
    Document,
    ListedPolicy,
    Policy,
    PolicyListing,
    PolicyStatus,
    Quote,
)
from integrations.answers.taxonomy import ErrorKind, InsurerError, Reason, Refusal, WaitHint
from integrations.calling.channel import MAX_DOCUMENT_RESPONSE_BYTES, MAX_RESPONSE_BYTES, Call, Reply
from integrations.pacing.waits import hint_from_retry_after, parse_delay_seconds

T = TypeVar("T")

logger = logging.getLogger(__name__)

ERROR_TABLE: dict[str, ErrorKind] = {
    "VAL_*": ErrorKind.VALIDATION,
    "AUTH_INVALID_CLIENT": ErrorKind.AUTH,
    # Reached only when a freshly fetched token is refused as expired too.
    "AUTH_TOKEN_EXPIRED": ErrorKind.AUTH,
    "BIZ_NOT_ELIGIBLE": ErrorKind.BUSINESS_REJECT,
    "BIZ_RISK_DECLINED": ErrorKind.BUSINESS_REJECT,
    "BIZ_QUOTE_EXPIRED": ErrorKind.EXPIRED,
    "BIZ_POLICY_NOT_FOUND": ErrorKind.NOT_FOUND,
    "DOC_NOT_READY": ErrorKind.NOT_READY,
    "SYS_BUSY": ErrorKind.UNAVAILABLE,
    "SYS_MAINTENANCE": ErrorKind.UNAVAILABLE,
    "BIZ_CANCEL_NOT_ALLOWED": ErrorKind.BUSINESS_REJECT,
    # BIZ_ALREADY_CANCELLED, and BIZ_DUPLICATE_REQUEST on police-iptal, are no errors: their
    # `data` is the first cancellation, our result.
}

# Codes whose `data.retry_after_seconds` is how long Çınar asks us to wait.
WAIT_CODES = frozenset({"SYS_MAINTENANCE", "DOC_NOT_READY"})

# What an agent reads (in one set of Turkish words, `Reason`) for Çınar's business refusals.
AGENT_MESSAGES = {
    "BIZ_NOT_ELIGIBLE": Reason.NOT_ELIGIBLE,
    "BIZ_RISK_DECLINED": Reason.RISK_DECLINED,
    "BIZ_QUOTE_EXPIRED": Reason.QUOTE_EXPIRED,
    "BIZ_CANCEL_NOT_ALLOWED": Reason.CANCEL_NOT_ALLOWED,
}

POLICY_STATUSES = {"AKTIF": PolicyStatus.ACTIVE, "IPTAL": PolicyStatus.CANCELLED, "BITTI": PolicyStatus.EXPIRED}

TOKEN_EXPIRED = "AUTH_TOKEN_EXPIRED"  # noqa: S105 - an error code, not a secret
DUPLICATE_REQUEST = "BIZ_DUPLICATE_REQUEST"

# Platform field -> Çınar field, per operation (order kept as the contract lists them).
VEHICLE_FIELDS = {
    "plate": "plaka",
    "owner_id": "kimlik_no",
    "registration_serial": "belge_seri_no",
    "usage": "kullanim",
}
KASKO_FIELDS = {**VEHICLE_FIELDS, "model_year": "model_yili", "brand_code": "marka_kodu", "model_code": "tip_kodu"}
ADDRESS_FIELDS = {"uavt_code": "uavt_kodu"}
DASK_FIELDS = {
    "uavt_code": "uavt_kodu",
    "building_id": "bina_no",
    "construction_type": "yapi_tarzi",
    "construction_year": "insa_yili",
    "floor_count": "kat_sayisi",
    "gross_m2": "brut_m2",
    "damage_status": "hasar_durumu",
    "owner_id": "kimlik_no",
}
ISSUE_FIELDS = {"quote_no": "teklif_no", "payment_token": "odeme_token"}
STATUS_FIELDS = {"policy_no": "police_no"}

# Quote and issuance terms (CONTRACTS.md, "Policy start", "Installments", "Kasko options"), sent
# only when the platform's data carries them; dates day.month.year, repair shops in Çınar's words.
START_FIELDS = {"starts_on": "baslangic"}
KASKO_TERM_FIELDS = {
    **START_FIELDS,
    "deductible": "muafiyet",
    "replacement_car_days": "ikame_gun",
    "liability_limit": "imm_limit",  # null: unlimited
    "repair_shop": "servis_turu",
}
ISSUE_TERM_FIELDS = {**START_FIELDS, "installments": "taksit_sayisi"}
REPAIR_SHOP_WORDS = {"authorized": "yetkili", "contracted": "anlasmali"}
DATE_FORMAT = "%d.%m.%Y"

# Çınar's VAL_<field> names the field it refused in its own words: which platform field that is.
VALIDATION_FIELDS: dict[str, str] = {
    f"VAL_{theirs.upper()}": ours
    for fields in (KASKO_FIELDS, DASK_FIELDS, ISSUE_FIELDS, STATUS_FIELDS, KASKO_TERM_FIELDS, ISSUE_TERM_FIELDS)
    for ours, theirs in fields.items()
} | {"VAL_KIMLIK": "owner_id", "VAL_TAKSIT": "installments"}

# Çınar's extras worth keeping on a quote as they come, under the platform's names (coverages
# and installments are read entry by entry, below).
QUOTE_DETAILS = {"sigorta_bedeli": "sum_insured"}


# --- token cache -------------------------------------------------------------------------------
# Tokens live for minutes (300 s in the contract) and every worker thread calls Çınar, so they
# are cached per process, keyed by (base_url, client_id). A token is dropped this long before
# Çınar would expire it, so a call never leaves with a token about to die in flight.
TOKEN_SAFETY_MARGIN = 30.0


@dataclass(frozen=True)
class _CachedToken:
    value: str
    expires_at: float  # time.monotonic()


_tokens: dict[tuple[str, str], _CachedToken] = {}
_tokens_lock = threading.Lock()
# One lock per client: threads needing a token for the same client wait for one fetch rather
# than all asking Çınar at once (its token endpoint is rate-limited like the rest).
_fetch_locks: dict[tuple[str, str], threading.Lock] = {}


def _fetch_lock(key: tuple[str, str]) -> threading.Lock:
    with _tokens_lock:
        return _fetch_locks.setdefault(key, threading.Lock())


def _cached_token(key: tuple[str, str]) -> str | None:
    with _tokens_lock:
        cached = _tokens.get(key)
        if cached is None:
            return None
        if cached.expires_at <= time.monotonic():
            del _tokens[key]
            return None
        return cached.value


def _store_token(key: tuple[str, str], value: str, expires_in: float) -> None:
    margin = min(TOKEN_SAFETY_MARGIN, expires_in / 10)
    with _tokens_lock:
        _tokens[key] = _CachedToken(value, time.monotonic() + expires_in - margin)


def _forget_token(key: tuple[str, str], value: str) -> None:
    """Drop `value` only: another thread may already have cached a fresh token for this client."""
    with _tokens_lock:
        cached = _tokens.get(key)
        if cached is not None and cached.value == value:
            del _tokens[key]


def clear_token_cache() -> None:
    """Forget every cached token (tests; a rotated client secret)."""
    with _tokens_lock:
        _tokens.clear()


# --- reading answers ---------------------------------------------------------------------------


def _gateway_refusal(reply: Reply) -> Refusal:
    """A non-200 answer comes from the gateway, never from Çınar: it carries no Çınar code."""
    if reply.status == 503:
        wait = hint_from_retry_after(reply.headers.get("Retry-After"))
        if wait is not None:
            # The gateway's 503 + Retry-After is Çınar's contracted throttle signal.
            return Refusal("503", "over the contracted rate", kind=ErrorKind.THROTTLED, wait=wait)
    return status_refusal(reply)


def _answer(reply: Reply) -> dict[str, Any]:
    """The JSON object Çınar answered with; anything else (gateway pages included) is a `Refusal`."""
    if reply.status != 200:
        raise _gateway_refusal(reply)
    body = json_body(reply)
    if not isinstance(body, dict):
        raise Refusal("MALFORMED_BODY", "JSON object expected")
    return body


def _refuse_if_failed(body: Mapping[str, Any]) -> None:
    """`success: false` is Çınar's "no", whatever the HTTP status said: raise its errorCode."""
    if body.get("success") is not False:
        return
    code = body.get("errorCode")
    if not isinstance(code, str) or not code:
        raise Refusal("MALFORMED_BODY", "failure without an errorCode")
    raw_data = body.get("data")
    data = raw_data if isinstance(raw_data, dict) else {}
    wait: WaitHint | None = None
    if code in WAIT_CODES:
        seconds = parse_delay_seconds(data.get("retry_after_seconds"))
        if seconds is not None:
            wait = WaitHint(seconds, "retry_after_seconds")
    message = AGENT_MESSAGES.get(code) or str(body.get("message") or "")
    field = next((f for f in (body.get("field"), data.get("field")) if isinstance(f, str) and f), None)
    field = field or VALIDATION_FIELDS.get(code)
    raise Refusal(code, message, field=field, wait=wait)


def _data(body: Mapping[str, Any]) -> dict[str, Any]:
    """The `data` object of a successful business answer."""
    _refuse_if_failed(body)
    data = body.get("data")
    if body.get("success") is not True or not isinstance(data, dict):
        raise Refusal("MALFORMED_BODY", "`success: true` with a `data` object expected")
    return data


def _read_token(reply: Reply) -> tuple[str, float]:
    """The token answer is the bare `{access_token, expires_in}` object (no `data` wrapper)."""
    try:
        body = _answer(reply)
        _refuse_if_failed(body)
    except Refusal as refusal:
        refusal.ambiguous = False  # a token request cannot have issued a policy, whatever failed
        raise
    token = body.get("access_token")
    expires_in = parse_delay_seconds(body.get("expires_in"))
    if not isinstance(token, str) or not token or not expires_in:
        raise ValueError("token answer lacks access_token or a positive expires_in")
    return token, expires_in


def _coverage(item: Any) -> dict[str, Any]:
    """`{"kod", "ad", "limit"}`, or a bare code string, as older answers send (no name, no limit)."""
    if isinstance(item, str):
        return coverage_entry(item)
    if not isinstance(item, dict):
        raise TypeError(f"coverage entry is a {type(item).__name__}")
    return coverage_entry(item.get("kod"), item.get("ad"), item.get("limit"), days=item.get("gun"))


def _installment(item: Any) -> dict[str, Any]:
    """`{"taksit_sayisi", "toplam"}`: the premium paid in that many parts, and its total."""
    if not isinstance(item, dict):
        raise TypeError(f"installment entry is a {type(item).__name__}")
    return installment_entry(item.get("taksit_sayisi"), item.get("toplam"))


def _quote_details(data: Mapping[str, Any]) -> dict[str, Any]:
    details = {ours: data[theirs] for theirs, ours in QUOTE_DETAILS.items() if theirs in data}
    if data.get("teminatlar") is not None:
        details["coverages"] = read_entries(data["teminatlar"], _coverage, log=logger, what="teminatlar")
    if data.get("taksitler") is not None:
        details["installments"] = read_entries(data["taksitler"], _installment, log=logger, what="taksitler")
    return details


def _read_quote(reply: Reply) -> Quote:
    data = _data(_answer(reply))
    return Quote(
        quote_no=text(data["teklif_no"]),
        premium=parse_money(data["prim"]),
        currency=text(data["para_birimi"]),
        valid_until=parse_utc(data["gecerlilik"]),
        details=_quote_details(data),
    )


def _read_address(reply: Reply) -> Address:
    data = _data(_answer(reply))
    return Address(uavt_code=text(data["uavt_kodu"]), address=text(data["adres"]), building_id=text(data["bina_no"]))


def _policy(data: Mapping[str, Any], status: PolicyStatus | None = None) -> Policy:
    """A policy with its period; an unreadable date is left out (None), never a failure."""
    return Policy(
        policy_no=text(data["police_no"]),
        status=status or POLICY_STATUSES[data["durum"]],
        starts_on=parse_policy_date(data.get("baslangic")),
        ends_on=parse_policy_date(data.get("bitis")),
    )


def _read_policy(reply: Reply) -> Policy:
    return _policy(_data(_answer(reply)))


def _read_issued_policy(reply: Reply) -> Policy:
    """A duplicate `request_ref` means our earlier send went through: its policy is the answer."""
    body = _answer(reply)
    if body.get("success") is False and body.get("errorCode") == DUPLICATE_REQUEST:
        data = body.get("data")
        policy_no = data.get("police_no") if isinstance(data, dict) else None
        if not isinstance(data, dict) or not isinstance(policy_no, str) or not policy_no:
            raise Refusal(DUPLICATE_REQUEST, "duplicate request_ref answered without data.police_no")
        # The answer names no status; a policy our own send created moments ago is in force.
        return _policy(data, PolicyStatus.ACTIVE)
    return _policy(_data(body))


def _document_reader(policy_no: Any) -> Callable[[Reply], Document]:
    """Read `police-pdf`'s `{"pdf_base64", "sayfa_sayisi"}` for `policy_no` (the answer does not repeat it)."""

    def read(reply: Reply) -> Document:
        data = _data(_answer(reply))
        encoded = data.get("pdf_base64")
        if not isinstance(encoded, str) or not encoded:
            raise ValueError("pdf_base64 missing or not text")
        # Strict: anything but the base64 alphabet (and the line breaks a MIME encoder adds) is an
        # unreadable answer, never a "document" of whatever bytes a lenient decoder makes of it.
        try:
            content = base64.b64decode(encoded.replace("\r", "").replace("\n", ""), validate=True)
        except ValueError as exc:  # binascii.Error included
            raise ValueError(f"pdf_base64 is not base64: {exc}") from None
        # Document refuses anything that is not a PDF of at most 5 MiB (a malformed answer).
        return Document(policy_no=text(policy_no), content=content)

    return read


# Cancellation and the production list (CONTRACTS.md, the last two sections): dates are written
# day.month.year, like a policy's period.
CANCEL_REASONS = {
    "vehicle_sold": "arac_satisi",
    "customer_request": "musteri_talebi",
    "duplicate": "mukerrer",
    "other": "diger",
}
ALREADY_CANCELLED = "BIZ_ALREADY_CANCELLED"
CINAR_DATE = "%d.%m.%Y"
# Which platform field a validation code of these islems names.
CANCEL_LIST_FIELDS = {
    "VAL_IPTAL_NEDENI": "reason",
    "VAL_IPTAL_TARIHI": "effective_on",
    "VAL_POLICE_NO": "policy_no",
    "VAL_TARIH": "issued_to",
}


def _cancel_list_refusal(refusal: Refusal) -> Refusal:
    refusal.field = refusal.field or CANCEL_LIST_FIELDS.get(refusal.code)
    return refusal


def _read_cancellation(reply: Reply) -> Cancellation:
    """A success, BIZ_ALREADY_CANCELLED, or BIZ_DUPLICATE_REQUEST (our request_ref: the earlier
    send cancelled the policy): each one's `data` is the cancellation, the same result."""
    body = _answer(reply)
    if body.get("success") is False and body.get("errorCode") in (ALREADY_CANCELLED, DUPLICATE_REQUEST):
        data = body.get("data")
        if not isinstance(data, dict):
            raise ValueError(f"{body.get('errorCode')} without the cancellation in data")
    else:
        try:
            data = _data(body)
        except Refusal as refusal:
            raise _cancel_list_refusal(refusal) from None
    if data.get("durum") != "IPTAL":
        raise ValueError(mask_and_cut(f"a cancellation's durum is {data.get('durum')!r}", 200))
    return Cancellation(
        policy_no=text(data["police_no"]),
        refund=parse_money(data["iade_prim"]),
        cancelled_on=parse_answer_date(data["iptal_tarihi"]),
    )


def _listed(item: Any) -> ListedPolicy:
    """One `data.policeler` entry; anything unreadable fails the page (never dropped unseen)."""
    if not isinstance(item, dict):
        raise TypeError(f"list item is a {type(item).__name__}")
    return ListedPolicy(
        policy_no=text(item["police_no"]),
        quote_no=text(item.get("teklif_no") or ""),
        product=text(item["brans"]),
        status=POLICY_STATUSES[item["durum"]],
        starts_on=parse_listed_date(item.get("baslangic")),
        ends_on=parse_listed_date(item.get("bitis")),
        premium=parse_money(item["prim"]),
    )


def _page_reader(page: int) -> Callable[[Reply], tuple[list[ListedPolicy], int | None]]:
    def read(reply: Reply) -> tuple[list[ListedPolicy], int | None]:
        try:
            data = _data(_answer(reply))
        except Refusal as refusal:
            raise _cancel_list_refusal(refusal) from None
        items, pages = data["policeler"], data["toplam_sayfa"]
        if not isinstance(items, list):
            raise ValueError(f"policeler is a {type(items).__name__}, not a list")
        if not isinstance(pages, int) or isinstance(pages, bool) or pages < 0:
            raise ValueError(mask_and_cut(f"toplam_sayfa is {pages!r}", 200))
        if data.get("sayfa", page) != page or (items and page > pages):
            raise ValueError(mask_and_cut(f"answer of sayfa {data.get('sayfa')!r} of {pages}, asked for {page}", 200))
        return [_listed(item) for item in items], (page + 1 if page < pages else None)

    return read


def _translate(data: Mapping[str, Any], fields: Mapping[str, str]) -> dict[str, Any]:
    """Platform fields under Çınar's names; a missing one is sent as null for Çınar to refuse."""
    return {theirs: data.get(ours) for ours, theirs in fields.items()}


def _terms(data: Mapping[str, Any], fields: Mapping[str, str]) -> dict[str, Any]:
    """The terms `data` carries, under Çınar's names and in its forms (`01.12.2026`, `yetkili`)."""
    wire = wire_terms(data, fields, date_format=DATE_FORMAT)
    if "repair_shop" in wire:
        wire["repair_shop"] = REPAIR_SHOP_WORDS.get(wire["repair_shop"], wire["repair_shop"])
    return {fields[ours]: value for ours, value in wire.items()}


@register
class CinarAdapter(InsurerAdapter):
    code = "cinar"
    name = "Çınar Sigorta"
    credential_fields = ("client_id", "client_secret")
    error_table = ERROR_TABLE
    issuance_deduplicated = True

    @classmethod
    def forget_process_state(cls) -> None:
        clear_token_cache()

    @property
    def _token_key(self) -> tuple[str, str]:
        return (self.channel.base_url, self.credentials["client_id"])

    def _token(self) -> str:
        """A live token for this client: the cached one, else one fetched now (one fetch per client)."""
        key = self._token_key
        token = _cached_token(key)
        if token is not None:
            return token
        lock = _fetch_lock(key)
        # Wait for another thread's fetch no longer than this operation may run; past that,
        # fetch anyway (the channel refuses to send once the deadline has passed).
        remaining = self.channel.remaining()
        acquired = lock.acquire(timeout=-1 if remaining is None else max(remaining, 0.0))
        try:
            token = _cached_token(key)
            if token is None:
                call = Call(
                    "POST",
                    "/api/v2/token",
                    json={
                        "client_id": self.credentials["client_id"],
                        "client_secret": self.credentials["client_secret"],
                    },
                    name="token",
                )
                token, expires_in = self.channel.exchange(call, _read_token)
                _store_token(key, token, expires_in)
            return token
        finally:
            if acquired:
                lock.release()

    def _send(
        self, islem: str, payload: dict[str, Any], read: Callable[[Reply], T], *, max_bytes: int = MAX_RESPONSE_BYTES
    ) -> T:
        """Send one call; on `AUTH_TOKEN_EXPIRED`, renew the token and send it once more.

        The contract says the renewal is not a retry, so it happens here and the engine only
        sees the final outcome. A second expiry goes through as a permanent auth failure.
        """
        token = self._token()
        try:
            return self.channel.exchange(self._call(islem, payload, token, max_bytes), read)
        except InsurerError as error:
            if error.provider_code != TOKEN_EXPIRED:
                raise
            _forget_token(self._token_key, token)
        return self.channel.exchange(self._call(islem, payload, self._token(), max_bytes), read)

    @staticmethod
    def _call(islem: str, payload: dict[str, Any], token: str, max_bytes: int) -> Call:
        return Call(
            "POST",
            f"/api/v2/{islem}",
            json=payload,
            headers={"Authorization": f"Bearer {token}"},
            max_bytes=max_bytes,
        )

    def trafik_quote(self, data: Mapping[str, Any]) -> Quote:
        payload = {**_translate(data, VEHICLE_FIELDS), **_terms(data, START_FIELDS)}
        return self._send("trafik-teklif", payload, _read_quote)

    def kasko_quote(self, data: Mapping[str, Any]) -> Quote:
        payload = {**_translate(data, KASKO_FIELDS), **_terms(data, KASKO_TERM_FIELDS)}
        return self._send("kasko-teklif", payload, _read_quote)

    def dask_address(self, data: Mapping[str, Any]) -> Address:
        return self._send("dask-adres", _translate(data, ADDRESS_FIELDS), _read_address)

    def dask_quote(self, data: Mapping[str, Any]) -> Quote:
        payload = {**_translate(data, DASK_FIELDS), **_terms(data, START_FIELDS)}
        return self._send("dask-teklif", payload, _read_quote)

    def issue_policy(self, data: Mapping[str, Any], *, reference: str) -> Policy:
        payload = {**_translate(data, ISSUE_FIELDS), **_terms(data, ISSUE_TERM_FIELDS), "request_ref": reference}
        return self._send("police-olustur", payload, _read_issued_policy)

    def find_issued_policy(self, data: Mapping[str, Any], *, reference: str) -> Policy | None:
        """No lookup to ask: a re-send under the same request_ref is the question (a repeat
        answers with the first send's policy), so "not known" here means "send it again"."""
        return None

    def policy_status(self, data: Mapping[str, Any]) -> Policy:
        return self._send("police-durum", _translate(data, STATUS_FIELDS), _read_policy)

    def policy_document(self, data: Mapping[str, Any]) -> Document:
        """The policy's PDF. The answer is base64 in JSON (4/3 of a PDF up to 5 MiB), hence the
        larger cap; DOC_NOT_READY is a NOT_READY wait of `data.retry_after_seconds`."""
        payload = _translate(data, STATUS_FIELDS)
        reader = _document_reader(data.get("policy_no"))
        return self._send("police-pdf", payload, reader, max_bytes=MAX_DOCUMENT_RESPONSE_BYTES)

    # -- cancellation and the production list ----------------------------------------------------

    def cancel_policy(self, data: Mapping[str, Any], *, reference: str) -> Cancellation:
        """Our reference is the `request_ref`: a repeat answers BIZ_DUPLICATE_REQUEST with the
        first cancellation, a success (as at issuance)."""
        payload = {
            "police_no": data.get("policy_no"),
            "iptal_nedeni": wire_word(CANCEL_REASONS, data.get("reason")),
            "iptal_tarihi": wire_date(data.get("effective_on"), CINAR_DATE),
            "request_ref": reference,
        }
        return self._send("police-iptal", payload, _read_cancellation)

    def policy_list(self, data: Mapping[str, Any]) -> PolicyListing:
        """`uretim-listesi` page by page, `sayfa` 1 to `toplam_sayfa`, one exchange each."""
        issued_from = wire_date(data.get("issued_from"), CINAR_DATE)
        issued_to = wire_date(data.get("issued_to"), CINAR_DATE)

        def fetch(page: int) -> tuple[list[ListedPolicy], int | None]:
            payload = {"baslangic": issued_from, "bitis": issued_to, "sayfa": page}
            return self._send("uretim-listesi", payload, _page_reader(page))

        return self.list_pages.read((issued_from, issued_to), fetch, first=1)
