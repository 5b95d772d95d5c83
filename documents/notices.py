"""What agents are told when a policy's document is ready (`notifications.services.notify`)."""

from __future__ import annotations

from documents.models import PolicyDocument
from notifications.models import Notification
from notifications.services import agency_people, notify, policy_link

Kind = Notification.Kind


def notify_document_ready(document: PolicyDocument) -> list[Notification]:
    policy = document.policy
    issuance = getattr(policy, "issuance", None)
    recipients = (
        [issuance.requested_by]
        if issuance is not None
        else agency_people(policy.agency_id, sub_agency_id=policy.sub_agency_id)
    )
    return notify(
        recipients=recipients,
        agency_id=policy.agency_id,
        kind=Kind.DOCUMENT_READY,
        key=f"document:{document.pk}:{document.sha256}",
        title=f"Poliçe belgesi hazır: {policy.policy_no}",
        body=f"{policy.insurer.name} poliçesi {policy.policy_no} belgesi indirilebilir.",
        link=policy_link(policy.pk),
        references=(policy.policy_no,),
    )
