"""Where a policy found on an insurer's production list came from, when the platform sold it.

The insurer's list names the quote a policy was issued from; only the desk (the quotes app)
knows that quote's request: the plate, the insured, the customer, the sub-agency and the agent
credited with the sale. The desk registers its lookup here in its `AppConfig.ready()`, so the
reconciliation asks without importing the desk (which imports this app for its policies).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from integrations.models import InsurerAccount

__all__ = ["SaleOrigin", "sale_origin_for", "sale_origin_lookup_register"]


@dataclass(frozen=True)
class SaleOrigin:
    """The request behind a quote number: what an imported policy is credited with."""

    plate: str = ""
    owner_id: str = ""
    customer_id: int | None = None
    sub_agency_id: int | None = None
    sold_by_id: int | None = None


SaleOriginLookup = Callable[[InsurerAccount, str], SaleOrigin | None]
_lookup: SaleOriginLookup | None = None


def sale_origin_lookup_register(lookup: SaleOriginLookup) -> None:
    """The one lookup (the desk's). Registering again replaces it: `ready()` may run twice in tests."""
    global _lookup
    _lookup = lookup


def sale_origin_for(account: InsurerAccount, quote_no: str) -> SaleOrigin | None:
    """The sale behind `quote_no` at this account, or None: no quote number, no desk installed, or
    a quote the platform never asked for (issued on the insurer's portal)."""
    if not quote_no or _lookup is None:
        return None
    return _lookup(account, quote_no)
