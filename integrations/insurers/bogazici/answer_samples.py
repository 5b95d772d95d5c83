"""Boğaziçi's answers as its contract shows them: the `IslemSonuc` of each kind, which
`soap_envelope` wraps the way Boğaziçi does. The adapter fuzz breaks a few elements of each;
a SOAP insurer's samples say how their envelope is written and which operation a request asked."""

from __future__ import annotations

import re
from typing import Any
from xml.sax.saxutils import escape

from integrations.insurers.bogazici.adapter import BS_NS, SOAP_NS

SAMPLES: dict[str, dict[str, Any]] = {
    "quote": {
        "Basarili": "true",
        "TeklifNo": "BG-T-1",
        "BrutPrim": "1234.50",
        "ParaBirimi": "TRY",
        "GecerlilikTarihi": "2030-01-01T00:00:00Z",
        "SigortaBedeli": "500000.00",
    },
    "address": {"Basarili": "true", "UavtKodu": "1234567890", "AcikAdres": "Moda Cad. 1", "BinaNo": "B-1"},
    "policy": {"Basarili": "true", "PoliceNo": "BG-P-1", "Durum": "YURURLUKTE"},
    "error": {
        "Basarili": "false",
        "HataKodu": "BS-110",
        "HataMesaji": "KimlikNo 10000000146 hatalı",
        "TekrarDenemeSn": "3",
    },
}
DEFAULT_OPERATION = "TrafikTeklif"


def soap_operation(request: Any) -> str | None:
    """The operation a request asked for, from its `SOAPAction`."""
    match = re.search(r"urn:bogazici:(\w+)", request.headers.get("SOAPAction", ""))
    return match.group(1) if match else None


def kinds(request: Any) -> list[str]:
    """The kinds of answer this request can get, its success first."""
    operation = soap_operation(request) or ""
    return ["address" if "Adres" in operation else "policy" if "Police" in operation else "quote", "error"]


def soap_envelope(operation: str, result: dict[str, Any], *, fault: tuple[str, str] | None, raw: bool) -> bytes:
    """An answer envelope: `result` as the operation's `IslemSonuc`, or a SOAP fault. `raw` leaves
    `<` and `&` unescaped, as a careless server would."""

    def element(name: str, value: Any) -> str:
        text = "" if value is None else str(value)
        return f"<b:{name}>{text if raw else escape(text)}</b:{name}>"

    if fault is not None:
        code, text = escape(fault[0]), escape(fault[1])
        body = f"<soap:Fault><faultcode>{code}</faultcode><faultstring>{text}</faultstring></soap:Fault>"
    else:
        children = "".join(element(name, value) for name, value in result.items())
        body = f"<b:{operation}Response><b:IslemSonuc>{children}</b:IslemSonuc></b:{operation}Response>"
    return (
        f'<soap:Envelope xmlns:soap="{SOAP_NS}" xmlns:b="{BS_NS}"><soap:Body>{body}</soap:Body></soap:Envelope>'
    ).encode()
