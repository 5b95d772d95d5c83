"""Fixtures for the nightly sync: policies known to the sandbox insurers, quick retry waits."""

from __future__ import annotations

from collections.abc import Callable, Iterable

import pytest

from integrations.adapters.registry import registered_codes
from integrations.models import Insurer, InsurerAccount, OperationPolicy
from integrations.retry_policies import clear_policy_cache
from policies.models import Policy
from quotes.models import Issuance
from tests.work.sends import hold_work_sends

CODES = registered_codes()


@pytest.fixture(autouse=True)
def sent_tasks(request, monkeypatch) -> list[tuple[str, int]]:
    """Tasks the sync services hand to django-q2, recorded instead of queued.

    A qcluster started by another test may still be running: nothing here should reach it.
    Tests that use the real cluster get the real queue.
    """
    sent: list[tuple[str, int]] = []
    if "qcluster" not in request.fixturenames:
        monkeypatch.setattr("sync.services._send_task", lambda func, item_id: sent.append((func, item_id)))
        hold_work_sends(monkeypatch, Issuance, into=sent, as_task=True)
    return sent


@pytest.fixture
def quick_status_policy(seeded_accounts):
    """Status checks retried after tenths of a second and deferred after 3 tries, not minutes and 8."""
    for insurer in Insurer.objects.all():
        OperationPolicy.objects.update_or_create(
            insurer=insurer,
            operation="policy_status",
            defaults={
                "max_attempts": 3,
                "base_delay": 0.05,
                "max_delay": 0.2,
                "deadline": 10.0,
                "attempt_timeout": 2.0,
                "unknown_max_attempts": 2,
            },
        )
    clear_policy_cache()
    yield
    clear_policy_cache()


@pytest.fixture
def make_policies(sandbox, seeded_accounts) -> Callable[..., list[Policy]]:
    """Store ACTIVE policies of ACENTE1 and tell each insurer the status it holds for them.

    `at_insurer` is the status the insurer answers; None leaves the policy unknown there
    (the insurer answers "not found").
    """

    def make(code: str, numbers: Iterable[str], *, at_insurer: str | None = "ACTIVE", product: str = "trafik"):
        account = InsurerAccount.objects.select_related("insurer", "agency").get(
            insurer__code=code, agency__code="ACENTE1"
        )
        policies = [
            Policy.objects.create(
                agency=account.agency,
                insurer=account.insurer,
                account=account,
                product=product,
                policy_no=number,
                owner_id="10000000146",
            )
            for number in numbers
        ]
        if at_insurer is not None:
            sandbox[code].state.seed_policies([{"policy_no": p.policy_no, "status": at_insurer} for p in policies])
        return policies

    return make
