"""django-q2 task entry points: thin, each calls one service."""

from __future__ import annotations


def cancellation_process(cancellation_id: int) -> str:
    from policies.services.cancellations import cancellation_process as process

    return process(cancellation_id)


def production_check_process(check_id: int) -> str:
    from policies.services.reconciliation import production_check_process as process

    return process(check_id)


def reconciliation_nightly() -> int:
    """Scheduled nightly: every account's production list of the last days, against ours."""
    from policies.services.reconciliation import reconciliation_start

    return len(reconciliation_start())


def renewal_reminders_daily() -> int:
    """Scheduled every morning: the reminders due today (30, 15 and 7 days before the end)."""
    from policies.services.renewal_reminders import renewal_reminders_send

    return len(renewal_reminders_send())
