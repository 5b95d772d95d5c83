"""Çınar's answers as its contract shows them, one valid body per kind (everything HTTP 200,
`success` and `errorCode` carry the outcome): the adapter fuzz breaks a few fields of each."""

from __future__ import annotations

from typing import Any

DATA: dict[str, dict[str, Any]] = {
    "quote": {"teklif_no": "CN-T-1", "prim": "1234.50", "para_birimi": "TRY", "gecerlilik": "2030-01-01T00:00:00Z"},
    "address": {"uavt_kodu": "1234567890", "adres": "Moda Cad. 1", "bina_no": "B-1"},
    "policy": {"police_no": "CN-P-1", "durum": "AKTIF"},
}
SAMPLES: dict[str, dict[str, Any]] = {
    "token": {"access_token": "tok-1", "expires_in": 300},
    **{kind: {"success": True, "data": data} for kind, data in DATA.items()},
    "error": {"success": False, "errorCode": "VAL_KIMLIK", "message": "kimlik_no 17291716060 hatalı", "data": {}},
    "duplicate": {"success": False, "errorCode": "BIZ_DUPLICATE_REQUEST", "data": {"police_no": "CN-P-1"}},
    "maintenance": {"success": False, "errorCode": "SYS_MAINTENANCE", "data": {"retry_after_seconds": 2}},
}


def kinds(request: Any) -> list[str]:
    """The kinds of answer this request can get, its success first."""
    path = request.path_url
    if path.endswith("/token"):
        kind = "token"
    elif "dask-adres" in path:
        kind = "address"
    elif "police" in path:
        kind = "policy"
    else:
        kind = "quote"
    return [kind, "error", "duplicate", "maintenance"]
