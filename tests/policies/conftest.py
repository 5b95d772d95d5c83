"""Shared helpers of the policy-operations tests: real policies, and records worked to their end."""

from __future__ import annotations

import time

import pytest
from django.utils import timezone

from integrations.models import Insurer, OperationPolicy
from integrations.retry_policies import clear_policy_cache
from policies.models import Cancellation, Policy
from policies.services import cancellations as svc
from tests.quotes.policy_samples import really_issued
from work.item import WorkState
from work.services import work_promote_due


@pytest.fixture
def quick_cancel_policy(seeded_accounts):
    for insurer in Insurer.objects.all():
        for operation in ("issue_policy", "cancel_policy"):
            OperationPolicy.objects.update_or_create(
                insurer=insurer,
                operation=operation,
                defaults={
                    "max_attempts": 3,
                    "base_delay": 0.05,
                    "max_delay": 0.2,
                    "deadline": 10.0,
                    "attempt_timeout": 1.0,
                },
            )
    clear_policy_cache()
    yield
    clear_policy_cache()


def issued(agents, code: str) -> Policy:
    """A trafik policy really issued at `code` for ACENTE1 (its premium and period from the insurer)."""
    return really_issued(agents["ACENTE1"], code)


def run_to_the_end(cancellation: Cancellation) -> Cancellation:
    for _ in range(40):
        state = svc.cancellation_process(cancellation.pk)
        if state in (WorkState.SUBMITTED, WorkState.FAILED, WorkState.DEFERRED):
            break
        due = Cancellation.objects.values_list("next_attempt_at", flat=True).get(pk=cancellation.pk)
        if due is not None:
            time.sleep(max((due - timezone.now()).total_seconds(), 0.0) + 0.02)
        work_promote_due(Cancellation)
    return Cancellation.objects.get(pk=cancellation.pk)
