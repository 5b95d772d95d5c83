"""What an agent is told of an issuance's end (`notifications.services.notify` sends it)."""

from __future__ import annotations

from django.urls import reverse

from notifications.models import Notification
from notifications.services import notify
from quotes.models import Issuance
from work.item import WorkState

Kind = Notification.Kind


def notify_issuance_outcome(issuance: Issuance) -> list[Notification]:
    """The agent who asked for an issuance hears how it ended: issued, refused, or waiting for
    a person (DEFERRED: the outcome is unknown and someone must look, never "failed")."""
    state = issuance.state
    quote = issuance.insurer_quote
    insurer = quote.insurer.name
    if state == WorkState.SUBMITTED and issuance.policy_no:
        kind, title = Kind.ISSUANCE_DONE, f"{insurer} poliçesi düzenlendi: {issuance.policy_no}"
        body = f"{insurer} teklifiniz {quote.quote_no} poliçeleşti. Poliçe no: {issuance.policy_no}."
    elif state == WorkState.FAILED:
        kind, title = Kind.ISSUANCE_REFUSED, f"{insurer} poliçeleştirmeyi reddetti"
        body = f"Teklif {quote.quote_no}: {issuance.error_message or 'şirket reddetti'}."
    elif state == WorkState.DEFERRED:
        kind, title = Kind.ISSUANCE_WAITING, f"{insurer} poliçeleştirmesi sizi bekliyor"
        body = (
            f"Teklif {quote.quote_no} için sonuç bilinmiyor; poliçe oluşmuş olabilir. "
            "Yeniden göndermeden önce şirketten durumu teyit edin."
        )
    else:
        return []
    return notify(
        recipients=[issuance.requested_by],
        agency_id=issuance.agency_id,
        kind=kind,
        key=f"issuance:{issuance.pk}:{state}",
        title=title,
        body=body,
        link=reverse("issuance_detail", args=[issuance.pk]),
        references=(issuance.policy_no, quote.quote_no),
    )
