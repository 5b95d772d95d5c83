"""cancel_policy and policy_list through every registered adapter, against its sandbox over real
HTTP (CONTRACTS.md, the last two sections): the same platform result whichever insurer, a lost
answer re-sent under the same reference, a failed page retried alone."""

from __future__ import annotations

import time
from datetime import date
from decimal import Decimal

import pytest

from integrations.adapters.registry import registered_codes
from integrations.answers.results import Cancellation, ListedPolicy, PolicyListing, PolicyStatus
from integrations.answers.taxonomy import Reason
from integrations.calling.calls import insurer_operation_run, new_reference
from integrations.models import Attempt
from sandbox import domain
from tests import samples

pytestmark = pytest.mark.django_db

CODES = registered_codes()
# The contract's example: 1629.27 TRY for 2026-06-01 .. 2027-06-01, cancelled from 2026-12-01.
PREMIUM, STARTS_ON, ENDS_ON = "1629.27", "2026-06-01", "2027-06-01"
CANCELLED = {"status": "CANCELLED", "refund": "812.40", "cancelled_on": "2026-12-01"}
MAY = {"issued_from": "2026-05-01", "issued_to": "2026-05-31"}


def no_sleep(seconds: float) -> None:
    """The engine's waits, skipped: the sandbox's faults do not depend on time passing."""


def run(endpoint_for, code, operation, data, **kwargs):
    return insurer_operation_run(endpoint=endpoint_for(code), operation=operation, data=data, **kwargs)


def number(sandbox, code: str, suffix: str) -> str:
    return f"{sandbox[code].insurer.prefix}-P-{suffix}"


def seed(sandbox, code: str, suffix: str, **changes) -> str:
    """A policy of ACENTE1's issued on the insurer's portal in May (no quote of ours)."""
    policy_no = number(sandbox, code, suffix)
    policy = {
        "policy_no": policy_no,
        "status": "ACTIVE",
        "agency": "ACENTE1",
        "product": "trafik",
        "premium": PREMIUM,
        "starts_on": STARTS_ON,
        "ends_on": ENDS_ON,
        "issued_on": "2026-05-31",
    }
    sandbox[code].state.seed_policies([{**policy, **changes}])
    return policy_no


def cancel(endpoint_for, code, policy_no, *, reference=None, reason="customer_request", effective_on="2026-12-01"):
    data = {"policy_no": policy_no, "reason": reason, "effective_on": effective_on}
    return run(endpoint_for, code, "cancel_policy", data, reference=reference or new_reference(), sleep=no_sleep)


@pytest.mark.parametrize("code", CODES)
def test_a_cancellation_is_the_contracts_result(sandbox, endpoint_for, code):
    """Refund and effective date as the platform's result, in one attempt; the policy then reads cancelled."""
    policy_no = seed(sandbox, code, "IPTAL-1")
    outcome = cancel(endpoint_for, code, policy_no)
    assert outcome.ok and outcome.attempts == 1, outcome.error
    assert isinstance(outcome.result, Cancellation) and outcome.result.refund == Decimal("812.40")
    assert outcome.result.cancelled_on == date(2026, 12, 1)
    assert outcome.result.to_json() == {"policy_no": policy_no, **CANCELLED}
    status = run(endpoint_for, code, "policy_status", {"policy_no": policy_no})
    assert status.ok and status.result.status is PolicyStatus.CANCELLED
    assert sandbox[code].state.counts()["cancellations_by_policy"] == {policy_no: 1}


@pytest.mark.parametrize("code", CODES)
def test_a_duplicate_refunds_everything_from_the_start(sandbox, endpoint_for, code):
    policy_no = seed(sandbox, code, "MUKERRER-1")
    outcome = cancel(endpoint_for, code, policy_no, reason="duplicate")
    assert outcome.ok, outcome.error
    assert (outcome.result.refund, outcome.result.cancelled_on) == (Decimal(PREMIUM), date(2026, 6, 1))


@pytest.mark.parametrize("code", CODES)
def test_already_cancelled_is_the_same_result(sandbox, endpoint_for, code):
    """A second cancellation under another reference reads the insurer's "already cancelled" as
    the first result: no error, and still one cancellation at the insurer."""
    policy_no = seed(sandbox, code, "ZATEN-1")
    first = cancel(endpoint_for, code, policy_no)
    again = cancel(endpoint_for, code, policy_no, effective_on="2027-01-15", reason="vehicle_sold")
    assert again.ok and again.attempts == 1, again.error
    assert again.result == first.result
    assert sandbox[code].state.counts()["cancellations_by_policy"] == {policy_no: 1}


@pytest.mark.parametrize("code", CODES)
def test_a_lost_answer_is_sent_again_under_the_same_reference(sandbox, endpoint_for, code):
    """commit_then_drop: the insurer cancelled and the answer was lost; the engine sends the same
    reference again and reads the first result; exactly one cancellation at the insurer."""
    policy_no = seed(sandbox, code, "DUSUR-1")
    sandbox[code].state.add_faults([{"operation": "cancel_policy", "fault": "commit_then_drop", "drop": "reset"}])
    reference = new_reference()
    outcome = cancel(endpoint_for, code, policy_no, reference=reference)
    assert outcome.ok and outcome.attempts == 2, outcome.error
    assert outcome.result.to_json() == {"policy_no": policy_no, **CANCELLED}
    counts = sandbox[code].state.counts()
    assert counts["cancellations_by_policy"] == {policy_no: 1}
    assert counts["received"]["cancel_policy"] == 2
    sent = Attempt.objects.filter(operation="cancel_policy", call="main").order_by("attempt_no")
    assert [(row.reference, row.ok, row.ambiguous) for row in sent] == [
        (reference, False, True),
        (reference, True, False),
    ]


@pytest.mark.parametrize("code", CODES)
@pytest.mark.parametrize(
    ("changes", "effective_on", "kind"),
    [
        ({"status": "EXPIRED"}, "2026-12-01", "business_reject"),
        ({"product": "dask", "open_claim": True}, "2026-12-01", "business_reject"),
        ({}, "2027-06-02", "validation"),
    ],
)
def test_refusals_are_permanent_and_asked_once(sandbox, endpoint_for, code, changes, effective_on, kind):
    """The insurer will not cancel (expired, an open DASK claim: Deniz's REJECTED poll too), or the
    date is outside the period: one attempt, a permanent answer, never an unknown outcome."""
    policy_no = seed(sandbox, code, "RED-1", **changes)
    outcome = cancel(endpoint_for, code, policy_no, effective_on=effective_on)
    assert not outcome.ok and (outcome.error.error_class, outcome.error.kind) == ("permanent", kind)
    assert outcome.attempts == 1 and outcome.outcome == ""
    assert sandbox[code].state.counts()["received"]["cancel_policy"] == 1
    if kind == "business_reject" and outcome.error.provider_code != "REJECTED":
        assert outcome.error.agent_message() == Reason.CANCEL_NOT_ALLOWED


@pytest.mark.parametrize("code", CODES)
def test_an_unknown_policy_is_not_found(sandbox, endpoint_for, code):
    outcome = cancel(endpoint_for, code, number(sandbox, code, "YOK-1"))
    assert (outcome.error.error_class, outcome.error.kind, outcome.attempts) == ("permanent", "not_found", 1)


@pytest.mark.parametrize("code", CODES)
def test_the_list_reads_every_page_in_the_insurers_order(sandbox, endpoint_for, code):
    """250 policies in May: three pages, one exchange each, newest issue first, in the platform's words."""
    for i in range(250):
        seed(sandbox, code, f"URETIM-{i:03d}", issued_on=f"2026-05-{1 + i % 31:02d}", premium=f"{1000 + i}.50")
    seed(sandbox, code, "EL-1", agency="ACENTE2")
    seed(sandbox, code, "KASKO-1", product="kasko", status="CANCELLED", issued_on="2026-06-01")
    outcome = run(endpoint_for, code, "policy_list", MAY, sleep=no_sleep)
    assert outcome.ok and outcome.attempts == 1, outcome.error
    listing = outcome.result
    assert isinstance(listing, PolicyListing) and len(listing.policies) == 250
    expected = sorted(range(250), key=lambda i: (1 + i % 31, i), reverse=True)
    assert [p.policy_no for p in listing.policies] == [number(sandbox, code, f"URETIM-{i:03d}") for i in expected]
    newest = expected[0]
    assert listing.policies[0] == ListedPolicy(
        policy_no=number(sandbox, code, f"URETIM-{newest:03d}"),
        quote_no="",
        product="trafik",
        status=PolicyStatus.ACTIVE,
        starts_on=date(2026, 6, 1),
        ends_on=date(2027, 6, 1),
        premium=Decimal(f"{1000 + newest}.50"),
    )
    assert sandbox[code].state.counts()["received"]["policy_list"] == 3
    assert Attempt.objects.filter(operation="policy_list", call="main", ok=True).count() == 3


@pytest.mark.parametrize("code", CODES)
def test_a_throttle_on_page_2_retries_page_2_only(sandbox, endpoint_for, code):
    """Page 1 is kept across the engine's attempts: the retry reads pages 2 and 3, never page 1 again."""
    for i in range(250):
        seed(sandbox, code, f"SAYFA-{i:03d}")
    sandbox[code].state.add_faults([{"operation": "policy_list", "fault": "throttle", "after": 1, "wait_seconds": 1}])
    outcome = run(endpoint_for, code, "policy_list", MAY, sleep=no_sleep)
    assert outcome.ok and outcome.attempts == 2, outcome.error
    assert len({p.policy_no for p in outcome.result.policies}) == len(outcome.result.policies) == 250
    counts = sandbox[code].state.counts()
    assert counts["received"]["policy_list"] == 4  # page 1, page 2 throttled, page 2, page 3
    assert counts["throttled"] == {"policy_list": 1}
    rows = list(Attempt.objects.filter(operation="policy_list", call="main").order_by("started_at"))
    assert [(row.attempt_no, row.ok, row.error_kind) for row in rows] == [
        (1, True, ""),
        (1, False, "throttled"),
        (2, True, ""),
        (2, True, ""),
    ]


@pytest.mark.parametrize("code", CODES)
def test_an_issued_policy_is_listed_with_its_quote(sandbox, endpoint_for, code):
    """Issued through the platform today: listed under today's date (Türkiye's calendar), with its quote."""
    quote = run(endpoint_for, code, "trafik_quote", samples.TRAFIK)
    issued = run(
        endpoint_for,
        code,
        "issue_policy",
        {"quote_no": quote.result.quote_no, "payment_token": samples.PAYMENT_TOKEN},
        reference=new_reference(),
    )
    assert issued.ok, issued.error
    today = domain.today_in_turkiye(time.time()).isoformat()
    outcome = run(endpoint_for, code, "policy_list", {"issued_from": today, "issued_to": today}, sleep=no_sleep)
    assert outcome.ok, outcome.error
    (listed,) = outcome.result.policies
    assert (listed.policy_no, listed.quote_no, listed.premium) == (
        issued.result.policy_no,
        quote.result.quote_no,
        quote.result.premium,
    )


@pytest.mark.parametrize("code", CODES)
def test_an_empty_range_is_an_empty_listing(sandbox, endpoint_for, code):
    outcome = run(endpoint_for, code, "policy_list", {"issued_from": "2020-01-01", "issued_to": "2020-01-31"})
    assert outcome.ok and outcome.result.policies == () and outcome.attempts == 1
    assert sandbox[code].state.counts()["received"]["policy_list"] == 1


@pytest.mark.parametrize("code", CODES)
@pytest.mark.parametrize(
    "bad",
    [
        {"issued_from": "2026-05-01", "issued_to": "2026-06-02"},
        {"issued_from": "2026-05-31", "issued_to": "2026-05-01"},
        {"issued_from": "yarın", "issued_to": "2026-05-31"},
    ],
)
def test_a_bad_range_is_a_validation_refusal_asked_once(sandbox, endpoint_for, code, bad):
    """Over 31 days, reversed, or malformed: the insurer's own validation code, permanent."""
    outcome = run(endpoint_for, code, "policy_list", bad, sleep=no_sleep)
    assert (outcome.error.error_class, outcome.error.kind, outcome.attempts) == ("permanent", "validation", 1)


def test_both_operations_are_required_of_every_adapter():
    """Abstract in InsurerAdapter: a registered adapter has both, and one without cannot be built."""
    from integrations.adapters.base import InsurerAdapter
    from integrations.adapters.registry import adapter_class
    from integrations.insurers.anka.adapter import AnkaAdapter

    for code in CODES:
        assert not {"cancel_policy", "policy_list"} & set(adapter_class(code).__abstractmethods__), code
    half = type("HalfAdapter", (AnkaAdapter,), {"policy_list": InsurerAdapter.policy_list})
    with pytest.raises(TypeError, match="policy_list"):
        half(channel=None, credentials={"api_key": "k"})
