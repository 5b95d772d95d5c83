"""Boğaziçi Sigorta: SOAP 1.1, errors inside HTTP 200, `BS-901` + `<TekrarDenemeSn>` throttle.

Issuance is NOT safe to re-send: Boğaziçi does not deduplicate, every successful
`Policelestir` creates another policy for the same quote, and it takes no reference of ours.
So every issuance failure that might hide a done deed is marked ambiguous, and before any
re-send the engine asks `TeklifPoliceSorgu` (by quote number) whether the quote was issued.

Answers are parsed with defusedxml by namespace: a DTD or an entity in an answer is refused
unread (never expanded), and the `b:` prefix the insurer happens to use means nothing.

The policy PDF (`PoliceBasim`) comes base64 inside the envelope; "not printed yet" is `BS-405`,
a wait Boğaziçi asks for (`<TekrarDenemeSn>`, read like the BS-901 quota's), never a failure.
"""

from __future__ import annotations

import base64
import binascii
import io
import logging
import re
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import Any, TypeVar, cast
from xml.etree.ElementTree import Element, ParseError
from xml.sax.saxutils import escape

import defusedxml.ElementTree as safe_xml
from defusedxml import DefusedXmlException

from insurehub.masking import mask_and_cut
from integrations.adapters.base import (
    InsurerAdapter,
    parse_answer_date,
    parse_listed_date,
    parse_money,
    parse_policy_date,
    parse_utc,
    status_refusal,
    wire_date,
    wire_terms,
    wire_word,
)
from integrations.adapters.registry import register
from integrations.answers.classification import classify
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
from integrations.answers.taxonomy import ErrorClass, ErrorKind, InsurerError, Reason, Refusal, WaitHint
from integrations.calling.channel import MAX_DOCUMENT_RESPONSE_BYTES, MAX_RESPONSE_BYTES, NOT_SENT, Call, Reply
from integrations.pacing.waits import parse_delay_seconds

T = TypeVar("T")

logger = logging.getLogger(__name__)

SERVICE_PATH = "/ws/AcenteService.asmx"
SOAP_NS = "http://schemas.xmlsoap.org/soap/envelope/"
BS_NS = "urn:bogazici"

ERROR_TABLE: dict[str, ErrorKind] = {
    "BS-100": ErrorKind.VALIDATION,
    "BS-110": ErrorKind.VALIDATION,
    "BS-200": ErrorKind.AUTH,
    "BS-300": ErrorKind.BUSINESS_REJECT,
    "BS-310": ErrorKind.BUSINESS_REJECT,
    "BS-320": ErrorKind.EXPIRED,
    # BS-330 "Poliçe zaten iptal" is no error: it carries the first cancellation, our result.
    "BS-340": ErrorKind.BUSINESS_REJECT,
    "BS-404": ErrorKind.NOT_FOUND,
    # "Basım hazır değil": the policy exists, its PDF is still being printed.
    "BS-405": ErrorKind.NOT_READY,
    "BS-900": ErrorKind.UNAVAILABLE,
    "BS-901": ErrorKind.THROTTLED,
    "BS-902": ErrorKind.TIMEOUT,
    # SOAP 1.1 faults (HTTP 500); a dotted suffix ("Server.Busy") is a more specific fault of the same side.
    "soap:Server": ErrorKind.UNAVAILABLE,
    "soap:Server.*": ErrorKind.UNAVAILABLE,
    "soap:Client": ErrorKind.VALIDATION,
    "soap:Client.*": ErrorKind.VALIDATION,
}

# What an agent reads (in one set of Turkish words, `Reason`) for Boğaziçi's business refusals.
AGENT_MESSAGES = {
    "BS-300": Reason.NOT_ELIGIBLE,
    "BS-310": Reason.RISK_DECLINED,
    "BS-320": Reason.QUOTE_EXPIRED,
    "BS-340": Reason.CANCEL_NOT_ALLOWED,
}

POLICY_STATUSES = {
    "YURURLUKTE": PolicyStatus.ACTIVE,
    "IPTAL": PolicyStatus.CANCELLED,
    "SURESI_DOLDU": PolicyStatus.EXPIRED,
}

# Platform field -> Boğaziçi element, per operation, in the contract's order.
VEHICLE_ELEMENTS = (
    ("Plaka", "plate"),
    ("KimlikNo", "owner_id"),
    ("BelgeSeriNo", "registration_serial"),
    ("KullanimTarzi", "usage"),
)
KASKO_ELEMENTS = (
    *VEHICLE_ELEMENTS,
    ("ModelYili", "model_year"),
    ("MarkaKodu", "brand_code"),
    ("TipKodu", "model_code"),
)
DASK_ADDRESS_ELEMENTS = (("UavtKodu", "uavt_code"),)
DASK_ELEMENTS = (
    ("UavtKodu", "uavt_code"),
    ("BinaNo", "building_id"),
    ("YapiTarzi", "construction_type"),
    ("InsaYili", "construction_year"),
    ("KatSayisi", "floor_count"),
    ("BrutM2", "gross_m2"),
    ("HasarDurumu", "damage_status"),
    ("KimlikNo", "owner_id"),
)
ISSUE_ELEMENTS = (("TeklifNo", "quote_no"), ("OdemeToken", "payment_token"))
LOOKUP_ELEMENTS = (("TeklifNo", "quote_no"),)
STATUS_ELEMENTS = (("PoliceNo", "policy_no"),)
DOCUMENT_ELEMENTS = (("PoliceNo", "policy_no"),)

# Quote and issuance terms (CONTRACTS.md, "Policy start", "Installments", "Kasko options"), sent
# only when the platform's data carries them; a BS-100 naming one points at its platform field.
START_ELEMENTS = (("BaslangicTarihi", "starts_on"),)
KASKO_TERM_ELEMENTS = (
    *START_ELEMENTS,
    ("Muafiyet", "deductible"),
    ("IkameGun", "replacement_car_days"),
    ("ImmLimit", "liability_limit"),  # 0: unlimited
    ("ServisTuru", "repair_shop"),
)
ISSUE_TERM_ELEMENTS = (*START_ELEMENTS, ("TaksitSayisi", "installments"))
REPAIR_SHOP_WORDS = {"authorized": "YETKILI", "contracted": "ANLASMALI"}
UNLIMITED_LIABILITY = "0"

# HataKodu values whose answer may say how long to wait in <TekrarDenemeSn>.
WAIT_CODES = frozenset({"BS-901", "BS-405"})

# Which platform field a BS-100 message's element name points at.
ELEMENT_FIELDS: dict[str, str] = dict(KASKO_ELEMENTS + DASK_ELEMENTS + ISSUE_ELEMENTS + STATUS_ELEMENTS)

# Characters XML 1.0 cannot carry at all, not even escaped: replaced so a bad value is refused as a
# value by the insurer instead of breaking the envelope.
_XML_ILLEGAL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _q(name: str, namespace: str = BS_NS) -> str:
    return f"{{{namespace}}}{name}"


def _wire_value(value: Any) -> str:
    """What goes between the tags: the platform's value as text, escaped; a missing one stays empty."""
    if value is None:
        return ""
    if isinstance(value, bool):
        text = "true" if value else "false"
    else:
        text = str(value)
    return escape(_XML_ILLEGAL.sub("\ufffd", text))


def soap_envelope(operation: str, elements: Sequence[tuple[str, Any]], *, username: str, password: str) -> bytes:
    """The request exactly as the contract shows it: credentials in `<b:Kimlik>`, values escaped."""
    fields = "".join(f"<b:{name}>{_wire_value(value)}</b:{name}>" for name, value in elements)
    return (
        f'<soap:Envelope xmlns:soap="{SOAP_NS}" xmlns:b="{BS_NS}">'
        f"<soap:Header><b:Kimlik><b:Kullanici>{_wire_value(username)}</b:Kullanici>"
        f"<b:Sifre>{_wire_value(password)}</b:Sifre></b:Kimlik></soap:Header>"
        f"<soap:Body><b:{operation}>{fields}</b:{operation}></soap:Body>"
        "</soap:Envelope>"
    ).encode()


def _child_text(parent: Element, name: str) -> str | None:
    child = parent.find(_q(name))
    if child is None:
        return None
    return (child.text or "").strip()


def _required(parent: Element, name: str) -> str:
    value = _child_text(parent, name)
    if not value:
        raise ValueError(f"answer lacks <{name}>")
    return value


def _looks_like_html(reply: Reply) -> bool:
    """Sniffed from the body, not the label: a real SOAP answer may come mislabelled `text/html`."""
    head = reply.content[:256].lstrip(b"\xef\xbb\xbf \t\r\n").lower()
    return head.startswith((b"<!doctype html", b"<html"))


def _parse_xml(reply: Reply) -> Element:
    """The answer's XML tree, or a `Refusal` saying why this answer cannot be read as one."""
    if not reply.content.strip():
        if reply.status >= 300:
            raise status_refusal(reply, "empty body")
        raise Refusal("EMPTY_BODY", "empty body where a SOAP answer was expected")
    if _looks_like_html(reply):
        # A gateway page (502/503 under load) carries no insurer code; its DOCTYPE is not an attack.
        if reply.status >= 300:
            raise status_refusal(reply)
        raise Refusal("MALFORMED_BODY", "HTML page where a SOAP answer was expected")
    try:
        return safe_xml.fromstring(reply.content, forbid_dtd=True)
    except DefusedXmlException as exc:
        # An XML bomb or external entity: refused before a single entity is expanded.
        raise Refusal("XML_REFUSED", f"answer carries a DTD or entity declaration ({type(exc).__name__})") from None
    except ParseError as exc:
        if reply.status >= 300:
            raise status_refusal(reply, f"unreadable XML: {exc}") from None
        raise Refusal("MALFORMED_BODY", f"unreadable XML: {exc}") from None


def _namespace_prefixes(content: bytes) -> dict[str, str]:
    """Prefix -> namespace declared in an (already safely parsed) answer, to resolve a fault's QName."""
    prefixes: dict[str, str] = {}
    for _event, declared in safe_xml.iterparse(io.BytesIO(content), events=("start-ns",), forbid_dtd=True):
        # A start-ns event carries (prefix, uri), not the Element the stubs give every event.
        prefix, uri = cast(tuple[str, str], declared)
        prefixes.setdefault(prefix, uri)
    return prefixes


def _fault_refusal(fault: Element, reply: Reply) -> Refusal:
    """A SOAP Fault: `soap:Server` is the insurer's side (retry), `soap:Client` ours (do not)."""
    # SOAP 1.1 fault children are unqualified; accept a qualified one too rather than miss the code.
    parts = {child.tag.rsplit("}", 1)[-1]: (child.text or "").strip() for child in fault}
    raw_code = parts.get("faultcode", "")
    message = parts.get("faultstring", "")
    prefix, _, local = raw_code.rpartition(":")
    if local and _namespace_prefixes(reply.content).get(prefix) == SOAP_NS:
        code = f"soap:{local}"
    else:
        code = raw_code or "SOAP_FAULT"
    side = local.split(".", 1)[0]
    kind = (
        {"Server": ErrorKind.UNAVAILABLE, "Client": ErrorKind.VALIDATION}.get(side)
        if code.startswith("soap:")
        else None
    )
    return Refusal(code, message, kind=kind)


def _signalled_wait(result: Element) -> WaitHint | None:
    """`<TekrarDenemeSn>`: the wait BS-901 (quota) and BS-405 (print not ready) may name."""
    seconds = parse_delay_seconds(_child_text(result, "TekrarDenemeSn"))
    return None if seconds is None else WaitHint(seconds, "TekrarDenemeSn")


def _field_named_in(message: str, elements: Sequence[tuple[str, str]]) -> str | None:
    """The platform field whose Boğaziçi element a BS-100/BS-110 message names (this operation's first)."""
    candidates = [name for name, _ in elements] + sorted(ELEMENT_FIELDS, key=len, reverse=True)
    for name in candidates:
        if re.search(rf"(?<![A-Za-z]){re.escape(name)}(?![A-Za-z])", message):
            return dict(elements).get(name) or ELEMENT_FIELDS.get(name, name)
    return None


def _with_terms(
    elements: Sequence[tuple[str, str]], data: Mapping[str, Any], terms: Sequence[tuple[str, str]]
) -> tuple[tuple[tuple[str, str], ...], dict[str, Any]]:
    """The operation's elements plus those of the terms `data` carries, and the data with those
    terms in Boğaziçi's words (`YETKILI`, `0` for unlimited İMM)."""
    wire = wire_terms(data, [field for _, field in terms])
    if "repair_shop" in wire:
        wire["repair_shop"] = REPAIR_SHOP_WORDS.get(wire["repair_shop"], wire["repair_shop"])
    if "liability_limit" in wire:
        limit = wire["liability_limit"]
        if limit is None:
            wire["liability_limit"] = UNLIMITED_LIABILITY
        elif isinstance(limit, str) and re.fullmatch(r"0+(\.0+)?", limit):
            # Boğaziçi reads 0 as unlimited: a zero limit of ours would buy the widest cover.
            raise InsurerError(
                ErrorKind.VALIDATION,
                provider_code=NOT_SENT,
                message="Boğaziçi'ye 0 TL İMM limiti gönderilemez (0 orada sınırsız demek); istek gönderilmedi.",
                field="liability_limit",
            )
    return (*elements, *((element, field) for element, field in terms if field in wire)), {**data, **wire}


def _coverage(item: Element) -> dict[str, Any]:
    """One `<Teminat>`: `<Kod>`, `<Ad>`, `<Limit>` (empty: unlimited), or an older answer's bare code."""
    if len(item) == 0:
        return coverage_entry((item.text or "").strip())
    return coverage_entry(
        _child_text(item, "Kod"),
        _child_text(item, "Ad"),
        _child_text(item, "Limit") or None,
        days=_child_text(item, "Gun") or None,  # a replacement car's days
    )


def _installment(item: Any) -> dict[str, Any]:
    """`<Taksit><Sayi>` parts, `<Toplam>` the whole premium paid so."""
    return installment_entry(_child_text(item, "Sayi"), _child_text(item, "Toplam"))


# Cancellation and the production list (CONTRACTS.md, the last two sections). UretimListesi's
# BaslangicTarihi/BitisTarihi are the range of issue dates, a <Police>'s the policy's period.
CANCEL_ELEMENTS = (("PoliceNo", "policy_no"), ("IptalNedeni", "reason"), ("IptalTarihi", "effective_on"))
LIST_ELEMENTS = (("BaslangicTarihi", "issued_from"), ("BitisTarihi", "issued_to"), ("Sayfa", "page"))
CANCEL_REASONS = {
    "vehicle_sold": "ARAC_SATIS",
    "customer_request": "SIGORTALI_TALEBI",
    "duplicate": "MUKERRER",
    "other": "DIGER",
}
ALREADY_CANCELLED = "BS-330"
BRANCHES = {"TRAFIK": "trafik", "KASKO": "kasko", "DASK": "dask"}


def _own_field(refusal: Refusal, elements: Sequence[tuple[str, str]]) -> Refusal:
    """A BS-100 about one of these operations' own elements names the platform field it is."""
    if refusal.code == "BS-100":
        for name, field in elements:
            if re.search(rf"(?<![A-Za-z]){name}(?![A-Za-z])", refusal.message):
                refusal.field = field
                break
    return refusal


def _islem_sonuc(reply: Reply, operation: str) -> Element:
    """The `<IslemSonuc>` of an answer already read once (BS-330's, which carries the result)."""
    result = _parse_xml(reply).find(f"{_q('Body', SOAP_NS)}/{_q(operation + 'Response')}/{_q('IslemSonuc')}")
    if result is None:
        raise ValueError(f"no {operation}Response/IslemSonuc")
    return result


def _cancellation(result: Element) -> Cancellation:
    """`PoliceNo, Durum (IPTAL), IadePrim, IptalTarihi`: a success's, or BS-330's."""
    status = _required(result, "Durum")
    if status != "IPTAL":
        raise ValueError(f"a cancellation's Durum is {status!r}")
    return Cancellation(
        policy_no=_required(result, "PoliceNo"),
        refund=parse_money(_required(result, "IadePrim")),
        cancelled_on=parse_answer_date(_required(result, "IptalTarihi")),
    )


def _listed(police: Element) -> ListedPolicy:
    """One `<Police>`; an empty `<TeklifNo/>` is a policy issued without a quote of ours."""
    return ListedPolicy(
        policy_no=_required(police, "PoliceNo"),
        quote_no=_child_text(police, "TeklifNo") or "",
        product=BRANCHES[_required(police, "Brans")],
        status=POLICY_STATUSES[_required(police, "Durum")],
        starts_on=parse_listed_date(_child_text(police, "BaslangicTarihi")),
        ends_on=parse_listed_date(_child_text(police, "BitisTarihi")),
        premium=parse_money(_required(police, "BrutPrim")),
    )


def _pdf_bytes(encoded: str) -> bytes:
    """`<PdfIcerik>` decoded strictly: XML may wrap base64 in lines, nothing else is forgiven."""
    compact = "".join(encoded.split())
    try:
        return base64.b64decode(compact, validate=True)
    except binascii.Error as exc:
        raise ValueError(f"PdfIcerik is not base64: {exc}") from None


@register
class BogaziciAdapter(InsurerAdapter):
    code = "bogazici"
    name = "Boğaziçi Sigorta"
    credential_fields = ("username", "password")
    error_table = ERROR_TABLE
    # The contract: the backend finishes or abandons every Policelestir within 30 s of receiving
    # it, so a BS-404 from TeklifPoliceSorgu is final only for a send older than that.
    policy_defaults = {"issue_policy": {"settling_seconds": 30.0}}
    # Every successful Policelestir is a new policy, even for a quote that already has one.
    issuance_deduplicated = False

    def _exchange(
        self,
        operation: str,
        elements: Sequence[tuple[str, str]],
        data: Mapping[str, Any],
        read: Callable[[Element], T],
        *,
        name: str = "main",
        on_refusal: Callable[[Refusal], T] | None = None,
        max_bytes: int = MAX_RESPONSE_BYTES,
    ) -> T:
        """Send one `<Islem>` and hand its successful `<IslemSonuc>` to `read`.

        `on_refusal` sees Boğaziçi's "no" first: it may re-raise it adjusted, or turn it into an answer.
        """
        body = soap_envelope(
            operation,
            [(element, data.get(field)) for element, field in elements],
            username=self.credentials["username"],
            password=self.credentials["password"],
        )
        call = Call(
            "POST",
            SERVICE_PATH,
            body=body,
            headers={"Content-Type": "text/xml; charset=utf-8", "SOAPAction": f'"urn:bogazici:{operation}"'},
            name=name,
            max_bytes=max_bytes,
        )

        def read_reply(reply: Reply) -> T:
            try:
                result = self._result(reply, operation, elements)
            except Refusal as refusal:
                if on_refusal is None:
                    raise
                return on_refusal(refusal)
            return read(result)

        return self.channel.exchange(call, read_reply)

    def _result(self, reply: Reply, operation: str, elements: Sequence[tuple[str, str]]) -> Element:
        """The `<IslemSonuc>` of a successful answer, or a `Refusal` with Boğaziçi's own code."""
        root = _parse_xml(reply)
        body = root.find(_q("Body", SOAP_NS)) if root.tag == _q("Envelope", SOAP_NS) else None
        if body is None:
            if reply.status >= 300:
                raise status_refusal(reply, "not a SOAP envelope")
            raise Refusal("MALFORMED_BODY", f"not a SOAP envelope: <{root.tag}>")
        fault = body.find(_q("Fault", SOAP_NS))
        if fault is not None:
            raise _fault_refusal(fault, reply)
        response = body.find(_q(f"{operation}Response"))
        result = response.find(_q("IslemSonuc")) if response is not None else None
        if result is None:
            if reply.status >= 300:
                raise status_refusal(reply, f"no {operation}Response/IslemSonuc")
            raise Refusal("MALFORMED_BODY", f"no {operation}Response/IslemSonuc in the answer")
        succeeded = (_child_text(result, "Basarili") or "").lower()
        if succeeded == "true":
            return result
        if succeeded != "false":
            raise Refusal("MALFORMED_BODY", f"Basarili is {succeeded!r}, not true/false")
        code = _child_text(result, "HataKodu") or "NO_ERROR_CODE"
        message = _child_text(result, "HataMesaji") or ""
        field = None
        if code == "BS-100":
            field = _field_named_in(message, elements)
        elif code == "BS-110":
            field = _field_named_in(message, elements) or "owner_id"
        wait = _signalled_wait(result) if code in WAIT_CODES else None
        raise Refusal(code, AGENT_MESSAGES.get(code) or message, field=field, wait=wait)

    @staticmethod
    def _quote(result: Element) -> Quote:
        details: dict[str, Any] = {}
        coverages = result.find(_q("Teminatlar"))
        if coverages is not None:
            details["coverages"] = read_entries(coverages.findall(_q("Teminat")), _coverage, log=logger, what="Teminat")
        installments = result.find(_q("Taksitler"))
        if installments is not None:
            details["installments"] = read_entries(
                installments.findall(_q("Taksit")), _installment, log=logger, what="Taksit"
            )
        sum_insured = _child_text(result, "SigortaBedeli")
        if sum_insured:
            # Details are stored as JSON: the validated decimal string, like the premium on the wire.
            details["sum_insured"] = str(parse_money(sum_insured))
        return Quote(
            quote_no=_required(result, "TeklifNo"),
            premium=parse_money(_required(result, "BrutPrim")),
            currency=_required(result, "ParaBirimi"),
            valid_until=parse_utc(_required(result, "GecerlilikTarihi")),
            details=details,
        )

    @staticmethod
    def _policy(result: Element) -> Policy:
        status = _required(result, "Durum")
        if status not in POLICY_STATUSES:
            raise ValueError(f"unknown policy status {status!r}")
        return Policy(
            policy_no=_required(result, "PoliceNo"),
            status=POLICY_STATUSES[status],
            starts_on=parse_policy_date(_child_text(result, "BaslangicTarihi")),
            ends_on=parse_policy_date(_child_text(result, "BitisTarihi")),
        )

    @staticmethod
    def _address(result: Element) -> Address:
        return Address(
            uavt_code=_required(result, "UavtKodu"),
            address=_required(result, "AcikAdres"),
            building_id=_required(result, "BinaNo"),
        )

    def trafik_quote(self, data: Mapping[str, Any]) -> Quote:
        return self._exchange("TrafikTeklif", *_with_terms(VEHICLE_ELEMENTS, data, START_ELEMENTS), self._quote)

    def kasko_quote(self, data: Mapping[str, Any]) -> Quote:
        return self._exchange("KaskoTeklif", *_with_terms(KASKO_ELEMENTS, data, KASKO_TERM_ELEMENTS), self._quote)

    def dask_address(self, data: Mapping[str, Any]) -> Address:
        return self._exchange("DaskAdresSorgu", DASK_ADDRESS_ELEMENTS, data, self._address)

    def dask_quote(self, data: Mapping[str, Any]) -> Quote:
        return self._exchange("DaskTeklif", *_with_terms(DASK_ELEMENTS, data, START_ELEMENTS), self._quote)

    def issue_policy(self, data: Mapping[str, Any], *, reference: str) -> Policy:
        """`Policelestir` takes no reference of ours; the quote number is what a lookup asks by."""

        def mark_maybe_issued(refusal: Refusal) -> Policy:
            # Boğaziçi does not deduplicate: unless the refusal proves nothing was done (a permanent
            # "no", or the BS-901 quota which the channel never marks), the policy may exist.
            if refusal.ambiguous is None:
                kind = classify(self.code, refusal.code, table=self.error_table, fallback=refusal.kind)
                refusal.ambiguous = kind.error_class is not ErrorClass.PERMANENT
            raise refusal

        elements, sent = _with_terms(ISSUE_ELEMENTS, data, ISSUE_TERM_ELEMENTS)
        return self._exchange("Policelestir", elements, sent, self._policy, on_refusal=mark_maybe_issued)

    def find_issued_policy(self, data: Mapping[str, Any], *, reference: str) -> Policy | None:
        """Ask `TeklifPoliceSorgu` by quote number: `BS-404` is the answer "never issued", not an error."""

        def never_issued(refusal: Refusal) -> None:
            if refusal.code == "BS-404":
                return
            raise refusal

        return self._exchange(
            "TeklifPoliceSorgu", LOOKUP_ELEMENTS, data, self._policy, name="lookup", on_refusal=never_issued
        )

    def policy_status(self, data: Mapping[str, Any]) -> Policy:
        return self._exchange("PoliceSorgu", STATUS_ELEMENTS, data, self._policy)

    def policy_document(self, data: Mapping[str, Any]) -> Document:
        """`PoliceBasim`: the PDF base64 in `<PdfIcerik>` (up to 5 MiB, so a larger answer is allowed).

        Anything but a PDF is an unreadable answer (unknown), never a document; BS-405 is NOT_READY
        with Boğaziçi's `<TekrarDenemeSn>` as the wait.
        """
        asked = data.get("policy_no")

        def read(result: Element) -> Document:
            policy_no = _child_text(result, "PoliceNo") or asked
            if asked and policy_no != asked:
                raise ValueError(mask_and_cut(f"answer is the document of policy {policy_no!r}, not of {asked!r}", 200))
            # No number at all fails the Document's own check, as any unusable one does.
            return Document(policy_no=policy_no or "", content=_pdf_bytes(_required(result, "PdfIcerik")))

        return self._exchange("PoliceBasim", DOCUMENT_ELEMENTS, data, read, max_bytes=MAX_DOCUMENT_RESPONSE_BYTES)

    # -- cancellation and the production list ----------------------------------------------------

    def _soap_call(self, operation: str, values: Sequence[tuple[str, Any]]) -> Call:
        """One `<Islem>` whose elements carry `values` as given (already in Boğaziçi's words)."""
        body = soap_envelope(
            operation, values, username=self.credentials["username"], password=self.credentials["password"]
        )
        headers = {"Content-Type": "text/xml; charset=utf-8", "SOAPAction": f'"urn:bogazici:{operation}"'}
        return Call("POST", SERVICE_PATH, body=body, headers=headers)

    def cancel_policy(self, data: Mapping[str, Any], *, reference: str) -> Cancellation:
        """`PoliceIptal` takes no reference of ours and Boğaziçi does not deduplicate, but a second
        `PoliceIptal` of a cancelled policy only answers BS-330 with the first cancellation's
        elements: sending again after a lost answer is the question, and can cancel nothing twice."""
        values = [
            ("PoliceNo", data.get("policy_no")),
            ("IptalNedeni", wire_word(CANCEL_REASONS, data.get("reason"))),
            ("IptalTarihi", wire_date(data.get("effective_on"))),
        ]
        return self.channel.exchange(self._soap_call("PoliceIptal", values), self._read_cancellation)

    def _read_cancellation(self, reply: Reply) -> Cancellation:
        """BS-330 is the first cancellation, our result. Any other "no" that does not prove nothing
        was done (a permanent one; the BS-901 quota, never marked) may hide a cancellation, as a
        BS-902 backend timeout does at issuance: the outcome is unknown, and we ask again."""
        try:
            result = self._result(reply, "PoliceIptal", CANCEL_ELEMENTS)
        except Refusal as refusal:
            if refusal.code != ALREADY_CANCELLED:
                if refusal.ambiguous is None:
                    kind = classify(self.code, refusal.code, table=self.error_table, fallback=refusal.kind)
                    refusal.ambiguous = kind.error_class is not ErrorClass.PERMANENT
                raise _own_field(refusal, CANCEL_ELEMENTS) from None
            result = _islem_sonuc(reply, "PoliceIptal")
        return _cancellation(result)

    def policy_list(self, data: Mapping[str, Any]) -> PolicyListing:
        """`UretimListesi` page by page, `Sayfa` 1 to `<ToplamSayfa>`, one exchange each."""
        issued_from, issued_to = wire_date(data.get("issued_from")), wire_date(data.get("issued_to"))

        def fetch(page: int) -> tuple[list[ListedPolicy], int | None]:
            values = [("BaslangicTarihi", issued_from), ("BitisTarihi", issued_to), ("Sayfa", page)]
            call = self._soap_call("UretimListesi", values)
            return self.channel.exchange(call, partial(self._read_page, page=page))

        return self.list_pages.read((issued_from, issued_to), fetch, first=1)

    def _read_page(self, reply: Reply, *, page: int) -> tuple[list[ListedPolicy], int | None]:
        try:
            result = self._result(reply, "UretimListesi", LIST_ELEMENTS)
        except Refusal as refusal:
            raise _own_field(refusal, LIST_ELEMENTS) from None
        pages_text = _required(result, "ToplamSayfa")
        if not pages_text.isascii() or not pages_text.isdigit():
            raise ValueError(mask_and_cut(f"ToplamSayfa is {pages_text!r}", 200))
        pages = int(pages_text)
        answered = _child_text(result, "Sayfa")
        if answered not in (None, str(page)):
            raise ValueError(mask_and_cut(f"answer of Sayfa {answered!r}, asked for {page}", 200))
        listed = result.find(_q("Policeler"))
        if listed is None and page <= pages:
            raise ValueError("no <Policeler> in a page of the list")
        items = [] if listed is None else listed.findall(_q("Police"))
        return [_listed(police) for police in items], (page + 1 if page < pages else None)
