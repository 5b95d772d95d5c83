"""The operations every insurer offers, and which product each belongs to."""

from __future__ import annotations

from enum import StrEnum


class Operation(StrEnum):
    TRAFIK_QUOTE = "trafik_quote"
    KASKO_QUOTE = "kasko_quote"
    DASK_ADDRESS = "dask_address"
    DASK_QUOTE = "dask_quote"
    ISSUE_POLICY = "issue_policy"
    POLICY_STATUS = "policy_status"
    POLICY_DOCUMENT = "policy_document"
    CANCEL_POLICY = "cancel_policy"
    POLICY_LIST = "policy_list"


# Operations that move money: a stable reference stored before the first send, and after an
# ambiguous failure the insurer is asked (or the same reference sent again) before anything else.
MONEY_OPERATIONS = frozenset({Operation.ISSUE_POLICY, Operation.CANCEL_POLICY})


class Product(StrEnum):
    TRAFIK = "trafik"
    KASKO = "kasko"
    DASK = "dask"


PRODUCT_LABELS_TR = {Product.TRAFIK: "Trafik", Product.KASKO: "Kasko", Product.DASK: "DASK"}

# How the admin names each operation (retry policies, the attempt log).
OPERATION_LABELS_TR: dict[Operation, str] = {
    Operation.TRAFIK_QUOTE: "Trafik teklifi",
    Operation.KASKO_QUOTE: "Kasko teklifi",
    Operation.DASK_ADDRESS: "DASK adres sorgusu",
    Operation.DASK_QUOTE: "DASK teklifi",
    Operation.ISSUE_POLICY: "Poliçeleştirme",
    Operation.POLICY_STATUS: "Poliçe durum sorgusu",
    Operation.POLICY_DOCUMENT: "Poliçe belgesi",
    Operation.CANCEL_POLICY: "Poliçe iptali",
    Operation.POLICY_LIST: "Üretim listesi",
}

OPERATION_PRODUCT: dict[Operation, Product | None] = {
    Operation.TRAFIK_QUOTE: Product.TRAFIK,
    Operation.KASKO_QUOTE: Product.KASKO,
    Operation.DASK_ADDRESS: Product.DASK,
    Operation.DASK_QUOTE: Product.DASK,
    # Issuance and status belong to whichever product the quote or policy is for.
    Operation.ISSUE_POLICY: None,
    Operation.POLICY_STATUS: None,
    Operation.POLICY_DOCUMENT: None,
    Operation.CANCEL_POLICY: None,
    Operation.POLICY_LIST: None,
}

QUOTE_OPERATION: dict[Product, Operation] = {
    Product.TRAFIK: Operation.TRAFIK_QUOTE,
    Product.KASKO: Operation.KASKO_QUOTE,
    Product.DASK: Operation.DASK_QUOTE,
}


# The platform's field names each request carries, as CONTRACTS.md lists them: one list, used
# by the validators (what an agent must fill in) and by the adapters (what is sent).
VEHICLE_FIELDS = ("plate", "owner_id", "registration_serial", "usage")
KASKO_FIELDS = (*VEHICLE_FIELDS, "model_year", "brand_code", "model_code")
DASK_RISK_FIELDS = ("construction_type", "construction_year", "floor_count", "gross_m2", "damage_status", "owner_id")
# The DASK quote also needs the building id that the address check returned.
DASK_QUOTE_FIELDS = ("uavt_code", "building_id", *DASK_RISK_FIELDS)

# What an agent types in for each product (DASK's building id comes from the address check).
PRODUCT_INPUT_FIELDS: dict[str, tuple[str, ...]] = {
    Product.TRAFIK: VEHICLE_FIELDS,
    Product.KASKO: KASKO_FIELDS,
    Product.DASK: ("uavt_code", *DASK_RISK_FIELDS),
}

# Kasko options a quote may carry (CONTRACTS.md, "Kasko options"): each optional.
KASKO_OPTION_FIELDS = ("deductible", "replacement_car_days", "liability_limit", "repair_shop")
KASKO_DEDUCTIBLES = (0, 2500, 5000, 10000)
KASKO_REPLACEMENT_CAR_DAYS = (0, 7, 15)
KASKO_REPAIR_SHOPS = ("authorized", "contracted")
# When cover starts (quotes and issuance): today up to this many days ahead; absent means tomorrow.
STARTS_ON_MAX_DAYS_AHEAD = 30

# Cancellation (iptal): the platform's fields and reasons.
CANCEL_FIELDS = ("policy_no", "reason", "effective_on")
CANCEL_REASONS = ("vehicle_sold", "customer_request", "duplicate", "other")
CANCEL_REASON_LABELS_TR = {
    "vehicle_sold": "Araç satışı",
    "customer_request": "Sigortalı talebi",
    "duplicate": "Mükerrer poliçe",
    "other": "Diğer",
}
# The production list: a date range of at most this many days (both ends inclusive).
POLICY_LIST_FIELDS = ("issued_from", "issued_to")
POLICY_LIST_MAX_DAYS = 31
