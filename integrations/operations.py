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
}

QUOTE_OPERATION: dict[Product, Operation] = {
    Product.TRAFIK: Operation.TRAFIK_QUOTE,
    Product.KASKO: Operation.KASKO_QUOTE,
    Product.DASK: Operation.DASK_QUOTE,
}
