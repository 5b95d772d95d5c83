"""The cancellation's rules before any insurer is asked: the refund the contract's rule gives,
what an agent may type, and one live cancellation per policy however it is asked."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

import pytest

from insurehub.errors import Invalid
from policies.models import Cancellation, Policy
from policies.services.cancellations import (
    CancellationRefused,
    cancellation_refund_estimate,
    cancellation_start,
)
from tests.quotes.policy_samples import imported_policy

pytestmark = pytest.mark.django_db

START, END = date(2026, 12, 1), date(2027, 12, 1)


@pytest.fixture
def policy(seeded_accounts):
    return imported_policy("ACENTE1", "anka", "AK-P-CANCEL-1", premium=Decimal("3650.00"), starts_on=START, ends_on=END)


def test_the_refund_is_the_unused_share_of_the_premium_rounded_half_up(policy):
    """365 days, 100 left: 3650 × 100 / 365 = 1000.00; one day used: 3640.00."""
    assert cancellation_refund_estimate(
        policy=policy, reason="vehicle_sold", effective_on=date(2027, 8, 23)
    ) == Decimal("1000.00")
    assert cancellation_refund_estimate(policy=policy, reason="other", effective_on=date(2026, 12, 2)) == Decimal(
        "3640.00"
    )
    Policy.objects.filter(pk=policy.pk).update(premium=Decimal("1000.00"))
    policy.refresh_from_db()
    # 1000 × 1 / 365 = 2.7397… -> 2.74
    assert cancellation_refund_estimate(policy=policy, reason="other", effective_on=date(2027, 11, 30)) == Decimal(
        "2.74"
    )


def test_a_duplicate_refunds_everything_from_the_start(policy, agents):
    # (A test's transaction never commits: no task is sent.)
    cancellation = cancellation_start(
        user=agents["ACENTE1"], policy_id=policy.pk, reason="duplicate", effective_on="2027-06-01"
    )
    assert cancellation.effective_on == START and cancellation.refund_estimate == Decimal("3650.00")


@pytest.mark.parametrize(
    ("reason", "effective_on", "field"),
    [
        ("", "2027-01-01", "reason"),
        ("stolen", "2027-01-01", "reason"),
        ("other", "yarın", "effective_on"),
        ("other", "2026-11-30", "effective_on"),
        ("other", "2027-12-02", "effective_on"),
    ],
)
def test_bad_input_names_the_field_and_stores_nothing(policy, agents, reason, effective_on, field):
    with pytest.raises(Invalid) as refused:
        cancellation_start(user=agents["ACENTE1"], policy_id=policy.pk, reason=reason, effective_on=effective_on)
    assert field in refused.value.field_errors
    assert not Cancellation.objects.exists()


def test_asking_twice_gives_the_same_cancellation(policy, agents):
    first = cancellation_start(user=agents["ACENTE1"], policy_id=policy.pk, reason="other", effective_on="01.06.2027")
    second = cancellation_start(
        user=agents["ACENTE1"], policy_id=policy.pk, reason="vehicle_sold", effective_on="2027-02-01"
    )
    assert first.pk == second.pk and Cancellation.objects.count() == 1
    assert first.effective_on == date(2027, 6, 1)


def test_another_agencys_policy_is_unknown_and_a_cancelled_one_is_refused(policy, agents):
    with pytest.raises(Policy.DoesNotExist):
        cancellation_start(user=agents["ACENTE2"], policy_id=policy.pk, reason="other", effective_on="2027-01-01")
    Policy.objects.filter(pk=policy.pk).update(status=Policy.Status.CANCELLED)
    with pytest.raises(CancellationRefused):
        cancellation_start(user=agents["ACENTE1"], policy_id=policy.pk, reason="other", effective_on="2027-01-01")
