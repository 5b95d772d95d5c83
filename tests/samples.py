"""Valid sample inputs, in the platform's field names, for every operation."""

from __future__ import annotations

import itertools
from typing import Any

TRAFIK: dict[str, Any] = {
    "plate": "34ABC123",
    "owner_id": "10000000146",
    "registration_serial": "AB123456",
    "usage": "private",
}

KASKO: dict[str, Any] = {**TRAFIK, "model_year": 2021, "brand_code": "012", "model_code": "345"}

DASK_ADDRESS: dict[str, Any] = {"uavt_code": "1234567890"}

DASK_RISK: dict[str, Any] = {
    "construction_type": "reinforced_concrete",
    "construction_year": 2005,
    "floor_count": 6,
    "gross_m2": 120,
    "damage_status": "none",
    "owner_id": "17291716060",
}

PAYMENT_TOKEN = "tok_visa_4242"


_plates = itertools.count(1)


def trafik_on_a_new_plate() -> dict:
    """The trafik sample on a plate no other test policy has: two trafik policies for one plate
    and period are refused at issuance (a test that issues several must vary the vehicle)."""
    return {**TRAFIK, "plate": f"34TS{next(_plates) % 10000:04d}"}
