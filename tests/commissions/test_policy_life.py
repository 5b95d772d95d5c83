"""A policy's commission through the real path: issued at the sandbox insurer (real HTTP), then
cancelled there; and an agreement entered later, applied by `recompute_commissions`."""

from __future__ import annotations

import io
from datetime import date, timedelta
from decimal import Decimal

import pytest
from django.core.management import call_command
from django.utils import timezone

from commissions.models import PolicyCommission
from commissions.services import commission_figures, kurus, policy_commission_reverse
from integrations.adapters.registry import registered_codes
from policies.models import Cancellation, Policy
from policies.services import cancellations as cancellation_service
from tests.policies.conftest import issued, run_to_the_end
from work.item import WorkState

from .conftest import agreement

pytestmark = pytest.mark.django_db

INSURERS = registered_codes()


def entries(policy: Policy) -> dict[str, PolicyCommission]:
    return {entry.kind: entry for entry in PolicyCommission.objects.filter(policy=policy)}


def cancel(agents, policy: Policy, **fields) -> Cancellation:
    assert policy.starts_on is not None  # the fixtures' policies have a period
    values = {"reason": "customer_request", "effective_on": policy.starts_on + timedelta(days=100), **fields}
    started = cancellation_service.cancellation_start(user=agents["ACENTE1"], policy_id=policy.pk, **values)
    return run_to_the_end(started)


@pytest.mark.parametrize("code", INSURERS)
def test_issuing_a_policy_reckons_its_commission_under_the_agreement_in_force(
    agents, sandbox, quick_cancel_policy, code
):
    """The insurer's own premium, the agreement started before today (not the later one), on net."""
    in_force = agreement(insurer=code, rate="12.50", base="net", effective_from=date(2020, 1, 1))
    agreement(insurer=code, rate="40.00", effective_from=timezone.localdate() + timedelta(days=1))
    policy = issued(agents, code)
    (accrual,) = PolicyCommission.objects.filter(policy=policy)
    expected = commission_figures(agreement=in_force, product="trafik", premium=policy.premium)
    assert (accrual.kind, accrual.agreement, accrual.premium) == ("accrual", in_force, policy.premium)
    assert (accrual.base_amount, accrual.amount) == (expected.base_amount, expected.amount)
    assert accrual.base_amount == kurus(policy.premium / Decimal("1.06"))
    assert accrual.amount > 0


def test_a_policy_issued_without_an_agreement_has_no_commission_and_the_desk_says_so(
    agents, sandbox, quick_cancel_policy, desk
):
    agreement(insurer="anka", product="kasko")  # another product's agreement does not apply
    policy = issued(agents, "anka")
    assert policy.status == Policy.Status.ACTIVE
    assert not PolicyCommission.objects.filter(policy=policy).exists()
    page = desk.get(f"/policeler/{policy.pk}/").content.decode()
    assert 'data-commission-state="no_agreement"' in page and "Komisyon anlaşması yok" in page


def test_the_desk_shows_the_commission_on_the_policy_page(agents, sandbox, quick_cancel_policy, desk):
    agreement(insurer="cinar", rate="10.00")
    policy = issued(agents, "cinar")
    accrual = PolicyCommission.objects.get(policy=policy)
    page = desk.get(f"/policeler/{policy.pk}/").content.decode()
    amount = f"{accrual.amount:,.2f}".replace(",", "\0").replace(".", ",").replace("\0", ".")
    assert 'data-commission-state="computed"' in page and f"{amount} ₺" in page


@pytest.mark.parametrize("code", INSURERS)
def test_a_cancellation_reverses_the_refunds_share_of_the_commission(agents, sandbox, quick_cancel_policy, code):
    agreement(insurer=code, rate="10.00")
    policy = issued(agents, code)
    cancellation = cancel(agents, policy)
    assert cancellation.state == WorkState.SUBMITTED, (cancellation.provider_code, cancellation.error_message)
    found = entries(policy)
    accrual, reversal = found["accrual"], found["reversal"]
    assert reversal.cancellation == cancellation and reversal.refund == cancellation.refund
    assert reversal.reckoning == PolicyCommission.Reckoning.REFUND
    assert reversal.amount == -kurus(accrual.amount * cancellation.refund / policy.premium)
    assert 0 < -reversal.amount < accrual.amount  # 100 days in: most of it back, not all


def test_a_duplicate_cancelled_gives_the_whole_commission_back(agents, sandbox, quick_cancel_policy, desk):
    agreement(insurer="deniz", rate="10.00")
    policy = issued(agents, "deniz")
    cancel(agents, policy, reason="duplicate", effective_on=policy.starts_on)
    found = entries(policy)
    assert found["reversal"].amount == -found["accrual"].amount
    page = desk.get(f"/policeler/{policy.pk}/").content.decode()
    assert "İptal iadesi" in page and 'class="commission-net">0,00 ₺' in page


def test_without_a_refund_the_reversal_goes_by_the_days_left(agents, sandbox, quick_cancel_policy):
    """An insurer answer without a refund (never seen yet, but the record allows it)."""
    agreement(insurer="anka", rate="10.00")
    policy = issued(agents, "anka")
    cancellation = cancel(agents, policy)
    PolicyCommission.objects.filter(policy=policy, kind="reversal").delete()
    Cancellation.objects.filter(pk=cancellation.pk).update(refund=None)
    cancellation.refresh_from_db()
    reversal = policy_commission_reverse(cancellation=cancellation)
    accrual = entries(policy)["accrual"]
    days, left = (policy.ends_on - policy.starts_on).days, (policy.ends_on - cancellation.cancelled_on).days
    assert reversal.reckoning == PolicyCommission.Reckoning.DAYS and reversal.refund is None
    assert reversal.amount == -kurus(accrual.amount * left / days)


def recompute(since: date) -> str:
    out = io.StringIO()
    call_command("recompute_commissions", since=since.isoformat(), stdout=out)
    return out.getvalue()


def test_an_agreement_entered_later_is_applied_by_the_command_once(agents, sandbox, quick_cancel_policy):
    """Issued and cancelled with no agreement; the agreement entered afterwards applies to both
    the commission and its reversal, and a second run changes nothing."""
    kept = issued(agents, "bogazici")
    cancelled = issued(agents, "bogazici")
    cancel(agents, cancelled)
    old = issued(agents, "bogazici")
    Policy.objects.filter(pk=old.pk).update(issued_at=timezone.now() - timedelta(days=40))
    assert not PolicyCommission.objects.exists()
    agreement(insurer="bogazici", rate="15.00")
    first = recompute(timezone.localdate() - timedelta(days=1))
    assert "2 policies issued since" in first and "2 created" in first
    assert set(entries(kept)) == {"accrual"}
    assert set(entries(cancelled)) == {"accrual", "reversal"}
    assert not entries(old)  # issued before --since: left alone
    snapshot = sorted(PolicyCommission.objects.values_list("policy", "kind", "amount", "computed_at"))
    second = recompute(timezone.localdate() - timedelta(days=1))
    assert "2 unchanged" in second and "0 created" in second and "0 corrected" in second
    assert sorted(PolicyCommission.objects.values_list("policy", "kind", "amount", "computed_at")) == snapshot


def test_a_backdated_agreement_corrects_what_the_command_finds(agents, sandbox, quick_cancel_policy):
    agreement(insurer="anka", rate="10.00", effective_from=date(2020, 1, 1))
    policy = issued(agents, "anka")
    before = entries(policy)["accrual"].amount
    newer = agreement(insurer="anka", rate="20.00", effective_from=timezone.localdate() - timedelta(days=3))
    assert "1 corrected" in recompute(timezone.localdate())
    after = entries(policy)["accrual"]
    assert after.agreement == newer and after.amount == kurus(policy.premium * Decimal("0.20")) != before


def test_the_command_refuses_a_malformed_day(db):
    from django.core.management.base import CommandError

    with pytest.raises(CommandError):
        call_command("recompute_commissions", since="02.12.2026")


def test_a_commission_that_cannot_be_reckoned_never_costs_the_issuance(
    agents, sandbox, quick_cancel_policy, desk, monkeypatch, caplog
):
    """Our own error while reckoning (here: a broken rule) is logged; the policy is issued and its
    page opens, showing no commission, for `recompute_commissions` to fill in later."""
    from commissions import services

    def broken(**kwargs):
        raise ArithmeticError("broken rule")

    agreement(insurer="anka", rate="10.00")
    monkeypatch.setattr(services, "commission_figures", broken)
    policy = issued(agents, "anka")
    assert Policy.objects.get(pk=policy.pk).status == Policy.Status.ACTIVE
    assert not PolicyCommission.objects.filter(policy=policy).exists()
    assert desk.get(f"/policeler/{policy.pk}/").status_code == 200
    assert f"policy {policy.pk}: its commission could not be reckoned at issuance" in caplog.text
