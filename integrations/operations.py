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


class Product(StrEnum):
    TRAFIK = "trafik"
    KASKO = "kasko"
    DASK = "dask"


PRODUCT_LABELS_TR = {Product.TRAFIK: "Trafik", Product.KASKO: "Kasko", Product.DASK: "DASK"}

OPERATION_PRODUCT: dict[Operation, Product | None] = {
    Operation.TRAFIK_QUOTE: Product.TRAFIK,
    Operation.KASKO_QUOTE: Product.KASKO,
    Operation.DASK_ADDRESS: Product.DASK,
    Operation.DASK_QUOTE: Product.DASK,
    # Issuance and status belong to whichever product the quote or policy is for.
    Operation.ISSUE_POLICY: None,
    Operation.POLICY_STATUS: None,
    Operation.POLICY_DOCUMENT: None,
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
