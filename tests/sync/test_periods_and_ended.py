"""The nightly sync keeps each policy's period current and tells the agency when it finds a
policy cancelled or lapsed at its insurer (once, however often the sync sees it)."""

from __future__ import annotations

from datetime import date

import pytest
from django.contrib.auth import get_user_model

from agencies.models import Agency, AgentProfile
from integrations.adapters.registry import registered_codes
from notifications.models import Notification
from sync import services as svc
from sync.models import SyncRun

pytestmark = pytest.mark.django_db(transaction=True)
CODES = registered_codes()


@pytest.mark.parametrize("code", CODES)
def test_sync_stores_the_period_and_notifies_once_when_a_policy_ended(
    make_policies, sandbox, quick_status_policy, code
):
    admin = get_user_model().objects.create_user(f"yonetici-{code}", password="test-pass-123")
    AgentProfile.objects.create(user=admin, agency=Agency.objects.get(code="ACENTE1"), is_agency_admin=True)
    active = make_policies(code, [f"{code.upper()}-P-10"])[0]
    ended = make_policies(code, [f"{code.upper()}-P-11"], at_insurer="CANCELLED")[0]
    sandbox[code].state.seed_policies(
        [{"policy_no": active.policy_no, "status": "ACTIVE", "starts_on": "2026-01-15", "ends_on": "2027-01-15"}]
    )

    for _ in range(2):  # two nights: the second sees the same cancellation and says nothing new
        run = svc.sync_run_start(trigger=SyncRun.Trigger.COMMAND)
        for item in run.items.all():
            assert svc.sync_item_process(item.pk) == "SUBMITTED"
        ended.refresh_from_db()
        ended.status = "ACTIVE"  # as if the agency had not seen it: the insurer's status is asked again
        ended.save(update_fields=["status"])

    active.refresh_from_db()
    assert (active.starts_on, active.ends_on) == (date(2026, 1, 15), date(2027, 1, 15))
    notes = Notification.objects.filter(kind="policy_ended")
    assert [(n.recipient, ended.policy_no in n.title) for n in notes] == [(admin, True)]
