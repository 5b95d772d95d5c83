"""A policy's calendar: Türkiye's today, the year a policy runs, and the period an insurer says it
runs. The desk, the nightly jobs and the reports all reckon periods with these, so a policy ends on
the same day wherever it is asked."""

from __future__ import annotations

from datetime import date

from django.utils import timezone

from integrations.answers import results
from policies.models import Policy

__all__ = ["one_year_after", "policy_period_store", "today"]


def today() -> date:
    """Today in Türkiye's calendar (TIME_ZONE), the calendar policy periods are written in."""
    return timezone.localdate()


def one_year_after(day: date) -> date:
    """A policy's end: the same day a year later (28 February for 29 February)."""
    try:
        return day.replace(year=day.year + 1)
    except ValueError:
        return day.replace(year=day.year + 1, day=28)


def policy_period_store(policy: Policy, result: results.Policy) -> bool:
    """Take the period an insurer's answer (issuance or status) gave; True if anything changed.

    A date the answer left out (None: not said, or in a form no adapter reads) never clears one
    we know: one insurer's terse status answer must not wipe the period its issuance reported.
    One UPDATE of the changed columns only, so it can sit inside the caller's transaction
    (after its own status write) without touching anything else.
    """
    changes = {
        name: value
        for name in ("starts_on", "ends_on")
        if (value := getattr(result, name)) is not None and value != getattr(policy, name)
    }
    if not changes:
        return False
    Policy.objects.filter(pk=policy.pk).update(**changes)
    for name, value in changes.items():
        setattr(policy, name, value)
    return True
