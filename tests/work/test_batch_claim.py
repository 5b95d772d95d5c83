"""Claiming durable records in batches: one statement for many records, each still one worker's.

`work_claim_batch` and `work_mark_submitted_batch` on sync items (the model with a claim
token), on the real test database, with real threads for the concurrent claims.
"""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from integrations.models import InsurerAccount
from policies.models import Policy
from sync.models import SyncItem, SyncRun
from work.item import WorkState
from work.services import (
    work_claim,
    work_claim_batch,
    work_mark_submitted_batch,
    work_reclaim_expired,
)

pytestmark = pytest.mark.django_db(transaction=True)


def _queued_items(count: int) -> list[int]:
    account = InsurerAccount.objects.select_related("insurer", "agency").get(
        insurer__code="anka", agency__code="ACENTE1"
    )
    run = SyncRun.objects.create(trigger=SyncRun.Trigger.COMMAND)
    policies = Policy.objects.bulk_create(
        [
            Policy(
                agency=account.agency, insurer=account.insurer, account=account, product="trafik", policy_no=f"AK-B-{i}"
            )
            for i in range(count)
        ]
    )
    SyncItem.objects.bulk_create(
        [SyncItem(run=run, policy=p, payload={"policy_no": p.policy_no, "insurer": "anka"}) for p in policies]
    )
    return list(SyncItem.objects.filter(run=run).order_by("pk").values_list("pk", flat=True))


def test_a_batch_claim_takes_the_oldest_queued_records_and_sets_token_and_lease(seeded_accounts):
    ids = _queued_items(10)
    SyncItem.objects.filter(pk=ids[0]).update(state=WorkState.PENDING)

    batch = work_claim_batch(SyncItem.objects.all(), limit=4, lease_seconds=60)

    assert [item.pk for item in batch] == ids[1:5]
    assert len({item.claim_token for item in batch}) == 1 and batch[0].claim_token
    assert all(item.state == WorkState.IN_FLIGHT and item.lease_expires_at > timezone.now() for item in batch)
    assert all(item.in_play_since is not None for item in batch)
    assert SyncItem.objects.filter(state=WorkState.QUEUED).count() == 5


def test_concurrent_claimers_never_get_the_same_record(seeded_accounts):
    """Four threads claim batches of 7 from 200 records at once until none is left: every
    record is claimed exactly once, and the claims are all the records."""
    ids = _queued_items(200)
    barrier = threading.Barrier(4)
    claimed: list[list[int]] = [[] for _ in range(4)]
    errors: list[BaseException] = []

    def claimer(n: int) -> None:
        try:
            barrier.wait()
            while batch := work_claim_batch(SyncItem.objects.all(), limit=7, lease_seconds=60):
                claimed[n].extend(item.pk for item in batch)
        except BaseException as exc:
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=claimer, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert not errors, errors
    every = [pk for batch in claimed for pk in batch]
    assert len(every) == len(set(every)) == 200
    assert sorted(every) == ids
    assert set(SyncItem.objects.values_list("state", flat=True)) == {WorkState.IN_FLIGHT}
    # Each claimer's records carry the tokens of its own claims only.
    tokens = [set(SyncItem.objects.filter(pk__in=batch).values_list("claim_token", flat=True)) for batch in claimed]
    assert all(not (a & b) for i, a in enumerate(tokens) for b in tokens[i + 1 :])


def test_a_batch_write_skips_records_whose_lease_was_taken_back(seeded_accounts):
    """Three records claimed together; one's lease runs out, the pump takes it back and another
    worker claims it. The first worker's batch write marks the other two SUBMITTED and leaves
    the third to its new owner, even though the late worker still holds the old token."""
    _queued_items(3)
    first, second, third = work_claim_batch(SyncItem.objects.all(), limit=3, lease_seconds=60)
    SyncItem.objects.filter(pk=third.pk).update(lease_expires_at=timezone.now() - timedelta(seconds=1))
    assert work_reclaim_expired(SyncItem) == [third.pk]
    assert work_claim(SyncItem, third.pk, lease_seconds=60)  # the new owner

    written = work_mark_submitted_batch(
        [(item, {"observed_status": "ACTIVE", "previous_status": "ACTIVE"}) for item in (first, second, third)]
    )

    assert [item.pk for item in written] == [first.pk, second.pk]
    states = dict(SyncItem.objects.values_list("pk", "state"))
    assert states == {first.pk: "SUBMITTED", second.pk: "SUBMITTED", third.pk: "IN_FLIGHT"}
    taken = SyncItem.objects.get(pk=third.pk)
    assert taken.claim_token != third.claim_token and taken.observed_status == "" and taken.attempts == 0
    done = SyncItem.objects.get(pk=first.pk)
    assert (done.attempts, done.lease_expires_at, done.observed_status) == (1, None, "ACTIVE")


def test_a_batch_write_groups_by_fields_and_writes_each_its_own(seeded_accounts):
    _queued_items(4)
    batch = work_claim_batch(SyncItem.objects.all(), limit=4, lease_seconds=60)
    fields = ["ACTIVE", "CANCELLED", "ACTIVE", "EXPIRED"]

    written = work_mark_submitted_batch(
        [(item, {"observed_status": status}) for item, status in zip(batch, fields, strict=True)]
    )

    assert len(written) == 4
    assert [SyncItem.objects.get(pk=item.pk).observed_status for item in batch] == fields


def test_a_record_handed_back_is_not_written_by_a_late_batch(seeded_accounts):
    """Once a record left IN_FLIGHT (handed back, retried), a batch write does not touch it."""
    _queued_items(2)
    kept, moved = work_claim_batch(SyncItem.objects.all(), limit=2, lease_seconds=60)
    SyncItem.objects.filter(pk=moved.pk).update(state=WorkState.PENDING, lease_expires_at=None)

    written = work_mark_submitted_batch([(item, {"observed_status": "ACTIVE"}) for item in (kept, moved)])

    assert [item.pk for item in written] == [kept.pk]
    assert SyncItem.objects.get(pk=moved.pk).state == WorkState.PENDING
