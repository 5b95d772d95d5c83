"""policy_period_store: the period from an issuance or status answer, never cleared by a silent one."""

from __future__ import annotations

from datetime import date

import pytest

from integrations.answers.results import Policy as PolicyResult
from integrations.answers.results import PolicyStatus
from policies.models import Policy
from policies.periods import policy_period_store
from tests.quotes.policy_samples import imported_policy

pytestmark = pytest.mark.django_db


@pytest.fixture
def policy(seeded_accounts) -> Policy:
    return imported_policy("ACENTE1", "anka", "ANK-PERIOD")


def answer(starts_on: date | None, ends_on: date | None) -> PolicyResult:
    return PolicyResult(policy_no="ANK-PERIOD", status=PolicyStatus.ACTIVE, starts_on=starts_on, ends_on=ends_on)


def test_first_answer_with_a_period_stores_it(policy):
    assert policy_period_store(policy, answer(date(2026, 12, 1), date(2027, 12, 1))) is True
    stored = Policy.objects.get(pk=policy.pk)
    assert (stored.starts_on, stored.ends_on) == (date(2026, 12, 1), date(2027, 12, 1))
    assert (policy.starts_on, policy.ends_on) == (date(2026, 12, 1), date(2027, 12, 1))


def test_an_answer_without_dates_never_clears_known_ones(policy):
    policy_period_store(policy, answer(date(2026, 12, 1), date(2027, 12, 1)))
    assert policy_period_store(policy, answer(None, None)) is False
    assert policy_period_store(policy, answer(None, date(2028, 1, 15))) is True
    stored = Policy.objects.get(pk=policy.pk)
    assert (stored.starts_on, stored.ends_on) == (date(2026, 12, 1), date(2028, 1, 15))


def test_the_same_period_again_writes_nothing(policy, django_assert_num_queries):
    policy_period_store(policy, answer(date(2026, 12, 1), date(2027, 12, 1)))
    with django_assert_num_queries(0):
        assert policy_period_store(policy, answer(date(2026, 12, 1), date(2027, 12, 1))) is False


def test_only_the_period_columns_are_written(policy):
    """A status the caller changed in the same transaction is not overwritten with the stale one."""
    Policy.objects.filter(pk=policy.pk).update(status=Policy.Status.CANCELLED)
    policy_period_store(policy, answer(date(2026, 12, 1), date(2027, 12, 1)))
    assert Policy.objects.get(pk=policy.pk).status == Policy.Status.CANCELLED
