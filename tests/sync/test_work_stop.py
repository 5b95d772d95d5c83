"""A worker whose cluster is stopping hands its durable record back at once, and loses nothing.

The real cluster and SIGTERM are in `test_graceful_stop`; here the stop is set in-process, so
each rule of the hand-back is checked on its own.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone

from agencies.models import Agency, AgentProfile
from integrations.calling.channel import WORKER_STOPPED, ExchangeStopped
from integrations.calling.engine import Outcome
from integrations.retry_policies import policy_for
from quotes.models import Issuance
from quotes.services import issuance as issuance_services
from quotes.services import quote_requests
from sync.models import SyncItem, SyncRun
from sync.services import sync_run_start
from tests import samples
from work import services as work
from work.item import WorkState
from work.services import WorkKind, retry_permit, work_claim, work_try

pytestmark = pytest.mark.django_db


@pytest.fixture
def stopping(monkeypatch) -> None:
    """This process's cluster is stopping (as its watch would have seen)."""
    watch = work._StopWatch(None)
    watch.event.set()
    monkeypatch.setattr(work, "_stop_watch", watch)


def _claimed_item(make_policies) -> SyncItem:
    make_policies("anka", ["ANKA-STOP-1"])
    run = sync_run_start(trigger=SyncRun.Trigger.COMMAND)
    item = run.items.get()
    assert work_claim(SyncItem, item.pk, lease_seconds=300)
    item.refresh_from_db()
    return item


def _cut_call(item: SyncItem, permit: str) -> Outcome:
    raise ExchangeStopped(sent=True)


def _never_stored(item: SyncItem, outcome: Outcome) -> None:
    raise AssertionError("a cut call has no answer to store")


def test_a_try_cut_by_the_stop_hands_the_item_back_due_now_with_no_try_used(make_policies):
    """PENDING, no lease, due now; attempts, reclaims and the attempt caps untouched."""
    item = _claimed_item(make_policies)
    SyncItem.objects.filter(pk=item.pk).update(attempts=2)
    item.refresh_from_db()
    kind = WorkKind(model=SyncItem, call=_cut_call, on_success=_never_stored)
    before = timezone.now()

    state = work_try(kind, item, insurer_code="anka", policy=policy_for("anka", "policy_status"))

    item.refresh_from_db()
    assert state == WorkState.PENDING == item.state
    assert item.lease_expires_at is None
    assert before - timedelta(seconds=1) <= item.next_attempt_at <= timezone.now()
    assert (item.attempts, item.reclaims, item.provider_code) == (2, 0, WORKER_STOPPED)


def test_the_redo_of_a_cut_try_is_not_charged_to_the_retry_budget(make_policies):
    """The cut try paid whatever it owed; its redo is the same try, not another retry."""
    item = _claimed_item(make_policies)
    item.attempts, item.provider_code = 3, WORKER_STOPPED
    assert retry_permit(item, insurer_code="anka") == "free"


def test_an_issuance_taken_after_the_stop_is_handed_back_without_a_call(sandbox, seeded_accounts, stopping):
    """A task the stopping cluster still hands a worker sends nothing, and the worker does not
    loop on the record it handed back: it is left PENDING and due for the next cluster."""
    user = get_user_model().objects.create_user("ajan-stop", password="test-pass-123")
    AgentProfile.objects.create(user=user, agency=Agency.objects.get(code="ACENTE1"))
    request = quote_requests.quote_request_create(user=user, product="trafik", data=samples.TRAFIK)
    quote = request.insurer_quotes.get(insurer__code="anka")
    quote_requests.insurer_quote_fetch(quote.pk)
    issuance = issuance_services.issuance_start(
        user=user, insurer_quote_id=quote.pk, payment_token=samples.PAYMENT_TOKEN
    )

    assert issuance_services.issuance_process(issuance.pk) == WorkState.PENDING

    issuance = Issuance.objects.get(pk=issuance.pk)
    assert issuance.lease_expires_at is None and issuance.next_attempt_at <= timezone.now()
    assert (issuance.attempts, issuance.maybe_sent, issuance.provider_code) == (0, False, WORKER_STOPPED)
    assert sandbox["anka"].state.counts()["received"].get("issue_policy", 0) == 0
