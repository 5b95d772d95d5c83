"""Boğaziçi Sigorta: SOAP 1.1, errors inside HTTP 200, and NO issuance deduplication.

Incoming envelopes are parsed with ``defusedxml`` (DTDs refused). Answers are built as text so
the namespaces look exactly like the contract's example: ``b:`` prefix on the response element,
children in ``urn:bogazici`` through a default ``xmlns``.

Quote answers list coverages and payment plans (CONTRACTS.md, last section). The contract names
``<Teminatlar><Teminat>`` with ``<Kod>``, ``<Ad>``, ``<Limit>`` (empty ``<Limit/>``: unlimited or not
applicable) and ``<Taksitler><Taksit>``; the children of a ``<Taksit>`` are this sandbox's choice,
in Boğaziçi's words:

    <Taksitler><Taksit><Sayi>3</Sayi><Toplam>4441.88</Toplam></Taksit>...</Taksitler>

``Sayi`` is how many parts, ``Toplam`` the whole premium paid in that many parts (TRY).
"""

from __future__ import annotations

import base64
import re
from typing import Any, ClassVar
from xml.etree.ElementTree import Element, ParseError
from xml.sax.saxutils import escape

import defusedxml.ElementTree as SafeET
from defusedxml import DefusedXmlException

from ... import domain
from ...core import BUSINESS_OPERATIONS, Account, FaultRule
from ...domain import DocumentNotReady, InvalidField, Refusal, iso_utc, money, validate
from ...insurer import Call, Insurer, Request, Response, ceil_seconds, gateway_page
from ...registry import register

SOAP_NS = "http://schemas.xmlsoap.org/soap/envelope/"
B_NS = "urn:bogazici"
CONTENT_TYPE = "text/xml; charset=utf-8"
ENDPOINT = "/ws/acenteservice.asmx"  # IIS paths are case-insensitive

ISLEM: dict[str, str] = {
    "TrafikTeklif": "trafik_quote",
    "KaskoTeklif": "kasko_quote",
    "DaskAdresSorgu": "dask_address",
    "DaskTeklif": "dask_quote",
    "Policelestir": "issue_policy",
    "PoliceSorgu": "policy_status",
    "TeklifPoliceSorgu": "issue_lookup",
    "PoliceBasim": "policy_document",
    "PoliceIptal": "cancel_policy",
    "UretimListesi": "policy_list",
}
ELEMENTS: dict[str, str] = {
    "Plaka": "plate",
    "KimlikNo": "owner_id",
    "BelgeSeriNo": "registration_serial",
    "KullanimTarzi": "usage",
    "ModelYili": "model_year",
    "MarkaKodu": "brand_code",
    "TipKodu": "model_code",
    "UavtKodu": "uavt_code",
    "BinaNo": "building_id",
    "YapiTarzi": "construction_type",
    "InsaYili": "construction_year",
    "KatSayisi": "floor_count",
    "BrutM2": "gross_m2",
    "HasarDurumu": "damage_status",
    "TeklifNo": "quote_no",
    "OdemeToken": "payment_token",
    "PoliceNo": "policy_no",
}
WIRE_NAMES = {platform: element for element, platform in ELEMENTS.items()}
INTEGER_ELEMENTS = frozenset({"ModelYili", "InsaYili", "KatSayisi", "BrutM2"})
# Quote and issuance terms (CONTRACTS.md, "Policy start", "Installments", "Kasko options"), read
# per Islem: <BaslangicTarihi> names other dates in other Islems.
START_ELEMENTS = {"BaslangicTarihi": "starts_on"}
KASKO_OPTION_ELEMENTS = {
    "Muafiyet": "deductible",
    "IkameGun": "replacement_car_days",
    "ImmLimit": "liability_limit",  # 0: unlimited
    "ServisTuru": "repair_shop",
}
TERM_ELEMENTS: dict[str, dict[str, str]] = {
    "TrafikTeklif": START_ELEMENTS,
    "KaskoTeklif": {**START_ELEMENTS, **KASKO_OPTION_ELEMENTS},
    "DaskTeklif": START_ELEMENTS,
    "Policelestir": {**START_ELEMENTS, "TaksitSayisi": "installments"},
}
TERM_INTEGER_ELEMENTS = frozenset({"IkameGun", "TaksitSayisi"})
REPAIR_SHOP_WORDS = {"YETKILI": "authorized", "ANLASMALI": "contracted"}
# What Boğaziçi sells: no 10 000 TRY deductible; its own İMM limits, unlimited among them.
KASKO_MENU = domain.KaskoMenu(deductibles=(0, 2500, 5000), liability_limits=(500_000, 1_000_000, 2_000_000, None))
OPTION_COVERAGES: dict[str, tuple[str, str]] = {
    "liability": ("IMM", "İhtiyari Mali Mesuliyet"),
    "replacement_car": ("IKAME_ARAC", "İkame Araç"),
    "deductible": ("MUAFIYET", "Muafiyet"),
}
MESSAGES: dict[str, str] = {
    "BS-100": "Girdi doğrulama hatası",
    "BS-110": "Geçersiz kimlik numarası",
    "BS-200": "Kimlik doğrulama başarısız",
    "BS-300": "Araç teminata uygun değil",
    "BS-310": "Risk kabul edilmedi",
    "BS-320": "Teklif süresi doldu",
    "BS-330": "Poliçe zaten iptal",
    "BS-340": "Poliçe iptal edilemez",
    "BS-404": "Kayıt bulunamadı",
    "BS-405": "Basım hazır değil",
    "BS-900": "Sistem yoğun",
    "BS-901": "Kota aşıldı",
    "BS-902": "Arka sistem zaman aşımı",
}
REFUSAL_CODES = {
    Refusal.NOT_FOUND: "BS-404",
    Refusal.ADDRESS_NOT_FOUND: "BS-404",
    Refusal.QUOTE_EXPIRED: "BS-320",
    Refusal.NOT_ELIGIBLE: "BS-300",
    Refusal.RISK_DECLINED: "BS-310",
    Refusal.PAYMENT_DECLINED: "BS-310",
}
STATUS_WORDS = {"ACTIVE": "YURURLUKTE", "CANCELLED": "IPTAL", "EXPIRED": "SURESI_DOLDU"}
# Platform cover -> Boğaziçi's code and name (the platform maps the codes back:
# integrations.answers.coverages.COMMON_ALIASES).
COVERAGES: dict[str, tuple[str, str]] = {
    "bodily_injury": ("SAKATLANMA_OLUM", "Sakatlanma ve Ölüm (kişi başı)"),
    "medical": ("TEDAVI", "Tedavi Masrafları (kişi başı)"),
    "property_damage": ("MADDI_HASAR", "Maddi Hasar (araç başı)"),
    "collision": ("CARPISMA", "Çarpışma"),
    "theft": ("HIRSIZLIK", "Hırsızlık"),
    "fire": ("YANGIN", "Yangın"),
    "flood": ("SEL", "Sel ve Su Baskını"),
    "glass": ("CAM", "Cam Kırılması"),
    "earthquake": ("DEPREM", "Deprem"),
}
# Fault kinds that change how a served answer is written (the call is served in full):
# - coverages_bare: the older coverage form, <Teminat>CARPISMA</Teminat>, without Kod/Ad/Limit;
# - coverage_malformed: two unreadable <Teminat> entries (no Kod; a Limit that is no amount) are
#   added to the good ones;
# - document_not_base64 / document_not_pdf: PoliceBasim succeeds with a PdfIcerik that is not
#   base64, or is base64 of something that is not a PDF.
ANSWER_VARIANTS = frozenset({"coverages_bare", "coverage_malformed", "document_not_base64", "document_not_pdf"})
MALFORMED_COVERAGES = (
    "<Teminat><Kod/><Ad>Adı var kodu yok</Ad><Limit>1000.00</Limit></Teminat>"
    "<Teminat><Kod>ASISTANS</Kod><Ad>Asistans</Ad><Limit>sınırsız</Limit></Teminat>"
)
_INTEGER_RE = re.compile(r"-?[0-9]{1,9}")


def envelope(body_xml: str) -> bytes:
    return (
        '<?xml version="1.0" encoding="utf-8"?>\n'
        f'<soap:Envelope xmlns:soap="{SOAP_NS}" xmlns:b="{B_NS}"><soap:Body>{body_xml}</soap:Body></soap:Envelope>'
    ).encode()


def element(name: str, value: Any) -> str:
    return f"<{name}>{escape(str(value))}</{name}>"


def answer(islem: str, result_xml: str) -> Response:
    """``<b:{Islem}Response>`` with HTTP 200, whether ``Basarili`` is true or false."""
    body = f'<b:{islem}Response xmlns="{B_NS}"><IslemSonuc>{result_xml}</IslemSonuc></b:{islem}Response>'
    return Response(200, envelope(body), CONTENT_TYPE)


def success(islem: str, elements: list[tuple[str, Any]], extra_xml: str = "") -> Response:
    items = "".join(element(name, value) for name, value in elements)
    return answer(islem, f"<Basarili>true</Basarili><HataKodu/><HataMesaji/>{items}{extra_xml}")


def failure(islem: str, code: str, message: str, extra_xml: str = "") -> Response:
    return answer(
        islem, f"<Basarili>false</Basarili>{element('HataKodu', code)}{element('HataMesaji', message)}{extra_xml}"
    )


def soap_fault(faultcode: str, faultstring: str) -> Response:
    body = f"<soap:Fault>{element('faultcode', faultcode)}{element('faultstring', faultstring)}</soap:Fault>"
    return Response(500, envelope(body), CONTENT_TYPE)


def _xml_bomb() -> bytes:
    """Billion laughs: ~1 KB that expands to 10**9 "lol"s in a parser that expands entities."""
    entities = ['  <!ENTITY lol0 "lol">']
    entities += [f'  <!ENTITY lol{i} "{f"&lol{i - 1};" * 10}">' for i in range(1, 10)]
    result = (
        '<b:TrafikTeklifResponse xmlns="urn:bogazici"><IslemSonuc><Basarili>true</Basarili><HataKodu/>'
        "<HataMesaji>&lol9;</HataMesaji></IslemSonuc></b:TrafikTeklifResponse>"
    )
    doctype = "<!DOCTYPE soap:Envelope [\n" + "\n".join(entities) + "\n]>\n"
    return (
        f'<?xml version="1.0" encoding="utf-8"?>\n{doctype}'
        f'<soap:Envelope xmlns:soap="{SOAP_NS}" xmlns:b="{B_NS}"><soap:Body>{result}</soap:Body></soap:Envelope>'
    ).encode()


XML_BOMB = _xml_bomb()


def _text(parent: Element | None, name: str) -> str | None:
    found = parent.find(f"{{{B_NS}}}{name}") if parent is not None else None
    return found.text.strip() if found is not None and found.text is not None else None


def _policy_elements(policy: Any) -> list[tuple[str, Any]]:
    """PoliceNo, Durum and the policy period (dates in Türkiye's calendar, no time)."""
    elements: list[tuple[str, Any]] = [("PoliceNo", policy.policy_no), ("Durum", STATUS_WORDS[policy.status])]
    if policy.starts_on is not None and policy.ends_on is not None:
        elements += [("BaslangicTarihi", policy.starts_on.isoformat()), ("BitisTarihi", policy.ends_on.isoformat())]
    return elements


def _coverages_xml(covers: list[tuple[str, Any]], variant: str | None, options: Any = None) -> str:
    option_covers = domain.option_covers(options or {})
    if variant == "coverages_bare":
        codes = [COVERAGES[code][0] for code, _ in covers] + [OPTION_COVERAGES[code][0] for code, _, _ in option_covers]
        return "<Teminatlar>" + "".join(element("Teminat", code) for code in codes) + "</Teminatlar>"
    items = []
    for code, limit in covers:
        wire_code, name = COVERAGES[code]
        limit_xml = "<Limit/>" if limit is None else element("Limit", money(limit))
        items.append(f"<Teminat>{element('Kod', wire_code)}{element('Ad', name)}{limit_xml}</Teminat>")
    items += [_option_coverage_xml(*cover) for cover in option_covers]
    if variant == "coverage_malformed":
        items.append(MALFORMED_COVERAGES)
    return "<Teminatlar>" + "".join(items) + "</Teminatlar>"


# Cancellation and the production list (CONTRACTS.md, the last two sections). Their handlers read
# their own elements from the envelope: the list's BaslangicTarihi/BitisTarihi are the range of
# issue dates, not a policy's period.
CANCEL_REASONS = {
    "ARAC_SATIS": "vehicle_sold",
    "SIGORTALI_TALEBI": "customer_request",
    "MUKERRER": "duplicate",
    "DIGER": "other",
}
CANCEL_ELEMENTS = {"PoliceNo": "policy_no", "IptalNedeni": "reason", "IptalTarihi": "effective_on"}
LIST_ELEMENTS = {"BaslangicTarihi": "issued_from", "BitisTarihi": "issued_to", "Sayfa": "page"}
BRANCHES = {"trafik": "TRAFIK", "kasko": "KASKO", "dask": "DASK"}


def _operation_elements(body: bytes) -> dict[str, str]:
    """The texts of the operation element's ``urn:bogazici`` children, by local name (the
    envelope was already read safely once, by ``route``)."""
    root = SafeET.fromstring(body, forbid_dtd=True)
    soap_body = root.find(f"{{{SOAP_NS}}}Body")
    assert soap_body is not None  # ``route`` refused an envelope without a non-empty soap:Body
    operation = soap_body[0]
    return {
        child.tag.removeprefix(f"{{{B_NS}}}"): (child.text or "").strip()
        for child in operation
        if child.tag.startswith(f"{{{B_NS}}}")
    }


def _cancellation_elements(cancellation: Any) -> list[tuple[str, Any]]:
    """PoliceIptal's success elements; BS-330 repeats them for a policy already cancelled."""
    return [
        ("PoliceNo", cancellation.policy_no),
        ("Durum", STATUS_WORDS["CANCELLED"]),
        ("IadePrim", money(cancellation.refund)),
        ("IptalTarihi", cancellation.cancelled_on.isoformat()),
    ]


def _listed_xml(policy: Any) -> str:
    """One ``<Police>`` of the production list; an empty ``<TeklifNo/>`` for a portal policy."""
    parts = [
        element("PoliceNo", policy.policy_no),
        element("TeklifNo", policy.quote_no) if policy.quote_no else "<TeklifNo/>",
        element("Brans", BRANCHES[policy.product]),
        element("Durum", STATUS_WORDS[policy.status]),
    ]
    if policy.starts_on is not None and policy.ends_on is not None:
        parts += [
            element("BaslangicTarihi", policy.starts_on.isoformat()),
            element("BitisTarihi", policy.ends_on.isoformat()),
        ]
    parts.append(element("BrutPrim", money(policy.premium)))
    return "<Police>" + "".join(parts) + "</Police>"


def _option_coverage_xml(code: str, amount: Any, days: int | None) -> str:
    """A priced kasko option as a <Teminat>: İMM with its <Limit> (empty: unlimited), the
    replacement car with its days in <Gun>, the deductible with its amount as the <Limit>."""
    wire_code, name = OPTION_COVERAGES[code]
    limit_xml = "<Limit/>" if amount is None else element("Limit", money(amount))
    if days is None:
        return f"<Teminat>{element('Kod', wire_code)}{element('Ad', name)}{limit_xml}</Teminat>"
    name = f"{name} ({days} gün)"
    return f"<Teminat>{element('Kod', wire_code)}{element('Ad', name)}{limit_xml}{element('Gun', days)}</Teminat>"


def _term_fields(islem: str, operation_element: Element) -> dict[str, Any]:
    """The Islem's quote or issuance terms under the platform's names and values. An empty element
    is "not given"; <ImmLimit>0</ImmLimit> is unlimited; what is no value of its kind stays as sent,
    for the ledger to refuse."""
    names = TERM_ELEMENTS.get(islem, {})
    fields: dict[str, Any] = {}
    for child in operation_element:
        name = child.tag.removeprefix(f"{{{B_NS}}}")
        value = (child.text or "").strip()
        if name not in names or name == child.tag or not value:
            continue
        if name in TERM_INTEGER_ELEMENTS:
            fields[names[name]] = int(value) if _INTEGER_RE.fullmatch(value) else value
        elif name == "ImmLimit":
            amount = domain.read_amount(value)
            fields[names[name]] = None if amount == 0 else value
        elif name == "ServisTuru":
            fields[names[name]] = REPAIR_SHOP_WORDS.get(value) or domain.Unreadable(value)
        else:
            fields[names[name]] = value
    return fields


def _installments_xml(plans: list[tuple[int, Any]]) -> str:
    items = "".join(
        f"<Taksit>{element('Sayi', count)}{element('Toplam', money(total))}</Taksit>" for count, total in plans
    )
    return f"<Taksitler>{items}</Taksitler>"


@register
class Bogazici(Insurer):
    code = "bogazici"
    prefix = "BG"
    port_offset = 1
    credential_keys = ("username", "password")
    default_accounts = (
        {"agency_code": "ACENTE1", "credentials": {"username": "acente1", "password": "bogazici-pass-1"}},
        {"agency_code": "ACENTE2", "credentials": {"username": "acente2", "password": "bogazici-pass-2"}},
    )
    document_name = "Boğaziçi Sigorta"  # printed on the policy PDFs
    content_type = CONTENT_TYPE
    operations = (*BUSINESS_OPERATIONS, "issue_lookup")
    extra_fault_kinds = frozenset({"soap_fault", "xml_bomb", *ANSWER_VARIANTS})
    throttle_codes = frozenset({"BS-901"})
    transient_faults: ClassVar[tuple[dict[str, Any], ...]] = (
        {"fault": "html", "http_status": 502},
        {"fault": "reset"},
        {"fault": "error", "code": "BS-900"},
    )
    cancel_committing_codes = frozenset({"BS-330"})
    kasko_menu = KASKO_MENU
    # Besides the BS-901 quota, the code that carries <TekrarDenemeSn>: "print not ready yet".
    wait_codes = frozenset({"BS-405"})
    garbage_body = success(
        "TrafikTeklif", [("TeklifNo", "BG-T-000001"), ("BrutPrim", "4312.50"), ("ParaBirimi", "TRY")]
    ).body

    def route(self, request: Request) -> Call:
        if request.method != "POST" or request.path.lower() != ENDPOINT:
            return Call("unknown", request, context={"not_found": True})
        action = (request.headers.get("SOAPAction") or "").strip().strip('"')
        action_islem = action.removeprefix(f"{B_NS}:") if action.startswith(f"{B_NS}:") else None
        try:
            root = SafeET.fromstring(request.body, forbid_dtd=True)
        except (ParseError, DefusedXmlException, ValueError) as exc:
            return self._client_fault(request, ISLEM.get(action_islem or "", "unknown"), f"XML okunamadı: {exc}")
        body = root.find(f"{{{SOAP_NS}}}Body") if root.tag == f"{{{SOAP_NS}}}Envelope" else None
        if body is None or len(body) == 0:
            return self._client_fault(request, "unknown", "SOAP 1.1 zarfı bekleniyor (soap:Envelope/soap:Body)")
        operation_element = body[0]
        islem = operation_element.tag.removeprefix(f"{{{B_NS}}}")
        if islem == operation_element.tag or islem not in ISLEM:
            return self._client_fault(request, "unknown", f"Bilinmeyen işlem: {operation_element.tag}")
        if action_islem != islem:
            return self._client_fault(
                request, ISLEM[islem], f"SOAPAction '{action}' gövdedeki işlemle ({islem}) uyuşmuyor"
            )
        fields: dict[str, Any] = {}
        for child in operation_element:
            name = child.tag.removeprefix(f"{{{B_NS}}}")
            if name in ELEMENTS and name != child.tag:  # elements of other namespaces do not count
                value = (child.text or "").strip()
                fields[ELEMENTS[name]] = (
                    int(value) if name in INTEGER_ELEMENTS and _INTEGER_RE.fullmatch(value) else value
                )
        fields.update(_term_fields(islem, operation_element))
        kimlik = root.find(f"{{{SOAP_NS}}}Header/{{{B_NS}}}Kimlik")
        credentials = {"username": _text(kimlik, "Kullanici"), "password": _text(kimlik, "Sifre")}
        return Call(
            ISLEM[islem],
            request,
            fields=fields,
            wire_names={**WIRE_NAMES, **{platform: name for name, platform in TERM_ELEMENTS.get(islem, {}).items()}},
            context={"islem": islem, "credentials": credentials},
        )

    def _client_fault(self, request: Request, operation: str, message: str) -> Call:
        return Call(operation, request, context={"fault": soap_fault("soap:Client", message)})

    def authenticate(self, call: Call) -> Account | Response:
        if call.context.get("not_found"):
            return gateway_page(404)
        if "fault" in call.context:
            return call.context["fault"]
        account = self.state.authenticate(call.context["credentials"])
        return account if account is not None else failure(call.context["islem"], "BS-200", MESSAGES["BS-200"])

    # --- operations ---------------------------------------------------------------------------------

    def _quote(self, call: Call) -> tuple[list[tuple[str, Any]], str, Any]:
        """The common quote elements, and the coverages and payment plans every quote lists."""
        quote = self.ledger.create_quote(
            call.operation, call.fields, agency=self.agency(call), ttl_seconds=self.state.config["quote_ttl_seconds"]
        )
        elements = [
            ("TeklifNo", quote.quote_no),
            ("BrutPrim", money(quote.premium)),
            ("ParaBirimi", "TRY"),
            ("GecerlilikTarihi", iso_utc(quote.valid_until)),
        ]
        covers = quote.covers()
        extras = _coverages_xml(covers, call.context.get("variant"), quote.terms.options) + _installments_xml(
            domain.installments(quote.premium)
        )
        return elements, extras, quote

    def op_trafik_quote(self, call: Call) -> Response:
        elements, extras, _ = self._quote(call)
        return success(call.context["islem"], elements, extras)

    def op_kasko_quote(self, call: Call) -> Response:
        elements, extras, _ = self._quote(call)
        return success(call.context["islem"], elements, extras)

    def op_dask_address(self, call: Call) -> Response:
        address = self.ledger.address(call.fields)
        elements = [("UavtKodu", address.uavt_code), ("AcikAdres", address.line), ("BinaNo", address.building_id)]
        return success(call.context["islem"], elements)

    def op_dask_quote(self, call: Call) -> Response:
        elements, extras, quote = self._quote(call)
        return success(call.context["islem"], [*elements, ("SigortaBedeli", money(quote.sum_insured))], extras)

    def op_issue_policy(self, call: Call) -> Response:
        """Every successful Policelestir is a new policy: Boğaziçi has no deduplication."""
        policy = self.ledger.issue(call.fields, agency=self.agency(call))
        call.issued_policy_no = policy.policy_no
        return success(call.context["islem"], [*_policy_elements(policy), ("TaksitSayisi", policy.installments)])

    def op_policy_status(self, call: Call) -> Response:
        policy = self.ledger.policy(
            call.fields, agency=self.agency(call), known_only=self.state.config["known_policies_only"]
        )
        return success(call.context["islem"], _policy_elements(policy))

    def op_issue_lookup(self, call: Call) -> Response:
        """TeklifPoliceSorgu: the latest policy of a quote, BS-404 if it was never issued."""
        validate(call.fields, ("quote_no",))
        policy = self.ledger.latest_policy_for_quote(call.fields["quote_no"], agency=self.agency(call))
        return success(call.context["islem"], _policy_elements(policy))

    def op_policy_document(self, call: Call) -> Response:
        """PoliceBasim: the PDF, base64 in <PdfIcerik>; BS-405 with <TekrarDenemeSn> while it is printed."""
        islem = call.context["islem"]
        try:
            pdf = self.ledger.document(
                call.fields,
                agency=self.agency(call),
                known_only=self.state.config["known_policies_only"],
                insurer_name=self.document_name,
            )
        except DocumentNotReady as not_ready:
            wait = element("TekrarDenemeSn", max(1, ceil_seconds(not_ready.seconds)))
            return failure(islem, "BS-405", MESSAGES["BS-405"], wait)
        variant = call.context.get("variant")
        if variant == "document_not_pdf":
            pdf = b"<html><body>Basim servisi bakimda</body></html>"
        content = base64.b64encode(pdf).decode("ascii")
        if variant == "document_not_base64":
            content = content[:40] + "*?!" + content[40:]
        return success(islem, [("PoliceNo", call.fields["policy_no"]), ("PdfIcerik", content)])

    # --- cancellation and the production list ------------------------------------------------------

    def op_cancel_policy(self, call: Call) -> Response:
        """PoliceIptal. No deduplication: a second one for a cancelled policy only answers BS-330,
        with the first cancellation's elements."""
        islem = call.context["islem"]
        sent = _operation_elements(call.request.body)
        call.wire_names = {**call.wire_names, **{platform: wire for wire, platform in CANCEL_ELEMENTS.items()}}
        reason = domain.read_choice(sent.get("IptalNedeni"), "reason", CANCEL_REASONS)
        effective_on = domain.read_date(sent.get("IptalTarihi"), "effective_on")
        try:
            cancellation = self.ledger.cancel(
                agency=self.agency(call), policy_no=sent.get("PoliceNo"), reason=reason, effective_on=effective_on
            )
        except domain.AlreadyCancelled as already:
            return self._already_cancelled(islem, already.cancellation)
        except domain.CancelNotAllowed as refused:
            return failure(islem, "BS-340", f"{MESSAGES['BS-340']}: {refused.detail}")
        return success(islem, _cancellation_elements(cancellation))

    def _already_cancelled(self, islem: str, cancellation: Any, message: str | None = None) -> Response:
        items = "".join(element(name, value) for name, value in _cancellation_elements(cancellation))
        return failure(islem, "BS-330", message or MESSAGES["BS-330"], items)

    def op_policy_list(self, call: Call) -> Response:
        """UretimListesi: BaslangicTarihi..BitisTarihi (issue dates), Sayfa; <ToplamSayfa> pages."""
        sent = _operation_elements(call.request.body)
        call.wire_names = {**call.wire_names, **{platform: wire for wire, platform in LIST_ELEMENTS.items()}}
        issued_from = domain.read_date(sent.get("BaslangicTarihi"), "issued_from")
        issued_to = domain.read_date(sent.get("BitisTarihi"), "issued_to")
        domain.check_list_range(issued_from, issued_to)
        page = domain.read_page(sent.get("Sayfa"))
        policies = self.ledger.production_list(agency=self.agency(call), issued_from=issued_from, issued_to=issued_to)
        items, pages = domain.page_of(policies, page)
        listed = "<Policeler>" + "".join(_listed_xml(policy) for policy in items) + "</Policeler>"
        return success(call.context["islem"], [("Sayfa", page), ("ToplamSayfa", pages)], listed)

    def render_cancel_error(self, call: Call, code: str, rule: FaultRule) -> Response | None:
        """BS-330 (served first, a committing code) carries the cancellation it names."""
        policy = self.ledger.policies.get(call.fields.get("policy_no") or "")
        if code != "BS-330" or policy is None or policy.status != "CANCELLED":
            return None
        return self._already_cancelled(call.context["islem"], self.ledger.cancellation_of(policy), rule.reason)

    def op_unknown(self, call: Call) -> Response:  # unreachable: unknown actions are faults at authentication
        return soap_fault("soap:Client", "Bilinmeyen işlem")

    # --- rendering ----------------------------------------------------------------------------------

    def render_invalid(self, call: Call, problem: InvalidField) -> Response:
        name = call.wire_name(problem.field)
        if problem.reason == "identity":
            return failure(call.context["islem"], "BS-110", f"{MESSAGES['BS-110']}: {name}")
        what = "alanı zorunludur" if problem.reason == "missing" else "alanı geçersiz"
        return failure(call.context["islem"], "BS-100", f"{name} {what}")

    def render_refusal(self, call: Call, refusal: Refusal) -> Response:
        code = REFUSAL_CODES[refusal.kind]
        return failure(call.context["islem"], code, MESSAGES[code] + (f": {refusal.detail}" if refusal.detail else ""))

    def render_throttle(self, call: Call, wait_seconds: float | None, *, from_bucket: bool) -> Response:
        extra = ""
        if wait_seconds is not None:
            seconds = ceil_seconds(wait_seconds)
            extra = element("TekrarDenemeSn", max(1, seconds) if from_bucket else seconds)
        return failure(call.context["islem"], "BS-901", MESSAGES["BS-901"], extra)

    def render_error(self, call: Call, code: str, rule: FaultRule) -> Response:
        if code in self.throttle_codes:
            return self.render_throttle(call, rule.wait(1.0), from_bucket=False)
        extra = ""
        if code in self.wait_codes:
            wait = rule.wait(1.0)  # as for BS-901: wait_seconds sets it, null leaves it out
            extra = "" if wait is None else element("TekrarDenemeSn", ceil_seconds(wait))
        return failure(call.context["islem"], code, rule.reason or MESSAGES.get(code, "Tanımlanmamış hata"), extra)

    def apply_extra_fault(self, rule: FaultRule, call: Call) -> Response:
        if rule.fault in ANSWER_VARIANTS:
            call.context["variant"] = rule.fault  # read by the handlers it concerns; the rest ignore it
            return self.handle(call)
        if rule.fault == "xml_bomb":
            return Response(rule.http_status or 200, XML_BOMB, CONTENT_TYPE)
        faultcode = rule.code or "soap:Server"
        if faultcode in ("Server", "Client"):
            faultcode = f"soap:{faultcode}"
        return soap_fault(
            faultcode, rule.reason or ("Sunucu hatası" if faultcode.endswith("Server") else "İstek hatalı")
        )
