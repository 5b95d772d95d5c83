"""What agents are told when the nightly sync finds a policy ended at its insurer."""

from __future__ import annotations

from notifications.models import Notification
from notifications.services import agency_people, notify, policy_link
from policies.models import Policy

Kind = Notification.Kind


def notify_policy_ended(policy: Policy) -> list[Notification]:
    """The nightly sync found a policy cancelled or lapsed at its insurer."""
    issuance = getattr(policy, "issuance", None)
    people = agency_people(policy.agency_id, sub_agency_id=policy.sub_agency_id)
    recipients = [issuance.requested_by, *people] if issuance else people
    status = policy.get_status_display()
    return notify(
        recipients=recipients,
        agency_id=policy.agency_id,
        kind=Kind.POLICY_ENDED,
        key=f"policy:{policy.pk}:{policy.status}",
        title=f"Poliçe {policy.policy_no}: {status}",
        body=f"Gece eşitlemesi {policy.insurer.name} poliçesi {policy.policy_no} için '{status}' durumunu buldu.",
        link=policy_link(policy.pk),
        references=(policy.policy_no,),
    )
