"""The money rules of commissions: the base, the rate, the one rounding, the reversal's share."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

import pytest

from commissions.models import CommissionAgreement, CommissionBase, PolicyCommission
from commissions.services import (
    PREMIUM_TAX_RATES,
    commission_figures,
    commission_reversal_figures,
    kurus,
    premium_net_of_taxes,
)
from integrations.operations import Product


def figures(premium: str, rate: str, base: str = CommissionBase.GROSS, product: str = "trafik"):
    agreement = CommissionAgreement(rate=Decimal(rate), base=base)
    return commission_figures(agreement=agreement, product=product, premium=Decimal(premium))


def test_every_product_has_its_tax_rate_stated():
    """A new product with no rate would fail every net agreement at issuance: it fails here first."""
    assert set(PREMIUM_TAX_RATES) == {product.value for product in Product}


def test_on_gross_the_rate_applies_to_the_whole_premium():
    result = figures("4312.50", "10.00")
    assert (result.base_amount, result.amount) == (Decimal("4312.50"), Decimal("431.25"))


@pytest.mark.parametrize(
    ("product", "net", "commission"),
    [
        # 4312.50 / 1.06 = 4068.396… → 4068.40; × 12.5 % = 508.55
        ("trafik", "4068.40", "508.55"),
        # 4312.50 / 1.05 = 4107.142… → 4107.14; × 12.5 % = 513.3925 → 513.39
        ("kasko", "4107.14", "513.39"),
        ("dask", "4312.50", "539.06"),  # no taxes: net is gross; 539.0625 → 539.06
    ],
)
def test_on_net_the_taxes_of_the_product_come_off_first(product, net, commission):
    result = figures("4312.50", "12.50", base=CommissionBase.NET, product=product)
    assert result.base_amount == premium_net_of_taxes(product=product, gross=Decimal("4312.50")) == Decimal(net)
    assert result.amount == Decimal(commission)


def test_half_a_kurus_rounds_up_not_to_even():
    """100.10 × 5 % is exactly 5.005: half-up gives 5.01 (banker's rounding, or a float, 5.00)."""
    assert figures("100.10", "5.00").amount == Decimal("5.01")
    assert figures("100.30", "5.00").amount == Decimal("5.02")  # 5.015 → 5.02 (to even would agree)
    assert kurus(Decimal("0.005")) == Decimal("0.01")
    assert kurus(Decimal("0.0049999")) == Decimal("0.00")


def test_the_commission_is_reckoned_from_the_net_premium_as_shown():
    """The net base is rounded first and the commission comes from that figure, so the entry can be
    checked by hand: 1060.53 / 1.06 = 1000.5 → 1000.50 (half up), × 1 % = 10.005 → 10.01."""
    result = figures("1060.53", "1.00", base=CommissionBase.NET)
    assert result.base_amount == Decimal("1000.50")
    assert result.amount == kurus(result.base_amount * result.rate / 100) == Decimal("10.01")


def reversal(**kwargs):
    values = {
        "commission": Decimal("431.25"),
        "premium": Decimal("4312.50"),
        "refund": None,
        "starts_on": date(2026, 1, 1),
        "ends_on": date(2027, 1, 1),
        "cancelled_on": date(2026, 7, 2),
        **kwargs,
    }
    return commission_reversal_figures(**values)


def test_a_refund_gives_back_its_share_of_the_commission():
    """431.25 × 812.40 / 4312.50 = 81.24."""
    result = reversal(refund=Decimal("812.40"))
    assert (result.amount, result.reckoning) == (Decimal("-81.24"), PolicyCommission.Reckoning.REFUND)


def test_the_reversal_rounds_once_on_the_exact_share():
    """10.01 × 50.00 / 100.00 is 5.005: rounded once, half up, 5.01 (a share rounded first would lose it)."""
    result = reversal(commission=Decimal("10.01"), premium=Decimal("100.00"), refund=Decimal("50.00"))
    assert result.amount == Decimal("-5.01")


def test_a_whole_refund_gives_back_the_whole_commission_and_never_more():
    assert reversal(refund=Decimal("4312.50")).amount == Decimal("-431.25")
    assert reversal(refund=Decimal("9999.00")).amount == Decimal("-431.25")
    assert reversal(refund=Decimal("0.00")).amount == Decimal("0.00")


def test_without_a_refund_the_days_left_decide():
    """365 days, cancelled with 183 left: 431.25 × 183 / 365 = 216.215… → 216.22."""
    result = reversal(refund=None)
    assert (result.amount, result.reckoning) == (Decimal("-216.22"), PolicyCommission.Reckoning.DAYS)
    assert reversal(cancelled_on=date(2026, 1, 1)).amount == Decimal("-431.25")  # from the start: all
    assert reversal(cancelled_on=date(2027, 3, 1)).amount == Decimal("0.00")  # after the end: nothing


def test_without_a_refund_or_a_period_nothing_is_guessed():
    assert reversal(refund=None, ends_on=None) is None
