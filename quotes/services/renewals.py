"""Renewals (yenileme): quoting a policy's risk again at every insurer before it ends.

Most of an agency's income is renewals, so the desk lists the policies ending soon and asks
every insurer again in one click, from the input of the request the policy was issued from.
"""

from __future__ import annotations

from datetime import timedelta
from uuid import UUID

from django.contrib.auth.models import User
from django.db import transaction

from insurehub.errors import Conflict
from integrations.operations import STARTS_ON_MAX_DAYS_AHEAD
from policies.models import Policy
from policies.periods import today
from policies.selectors import policy_get
from quotes import selectors
from quotes.models import QuoteRequest
from quotes.services.quote_requests import InputInvalid, quote_request_create

NO_SOURCE_MESSAGE = (
    "Bu poliçe platform dışından aktarıldı; yeniden teklif için gereken bilgiler (ruhsat, araç, adres) "
    "kayıtlı değil. Lütfen yeni teklif formunu kullanın."
)
RULES_CHANGED_MESSAGE = "Eski teklifin bilgileri bugünkü kurallara uymuyor; lütfen yeni teklif formunu kullanın."


TOO_EARLY_MESSAGE = (
    "Yenileme teklifi poliçe bitişinden en çok {days} gün önce alınabilir; bu poliçe {ends:%d.%m.%Y} tarihinde bitiyor."
)


def renewal_starts_on(policy: Policy) -> str:
    """The renewal starts the day the old policy ends (its period's end is the new one's start,
    with no day of overlap and none uncovered); an ended one, tomorrow. Insurers quote at most
    30 days ahead, so a renewal asked earlier than that is refused with the day it may be asked."""
    tomorrow = today() + timedelta(days=1)
    if policy.ends_on is None or policy.ends_on < tomorrow:
        return tomorrow.isoformat()
    if policy.ends_on > today() + timedelta(days=STARTS_ON_MAX_DAYS_AHEAD):
        raise RenewalNotPossible(TOO_EARLY_MESSAGE.format(days=STARTS_ON_MAX_DAYS_AHEAD, ends=policy.ends_on))
    return policy.ends_on.isoformat()


class RenewalNotPossible(Conflict):
    """The policy cannot be quoted again from what the platform knows; the text is for the agent."""


def renewal_quote_create(*, user: User, policy_id: int) -> QuoteRequest:
    """A new quote request for the same product and risk as the policy, at every insurer.

    The risk is the input of the request the policy was issued from; a policy imported from
    CSV has none, and is refused with RenewalNotPossible. The new request is the same
    customer's, credited to the policy's sub-agency. Only the policy's own scope may ask (its
    insurer accounts are called; `agencies.scope`); another agency's (or sub-agency's) id raises
    Policy.DoesNotExist, as an unknown one does. The input is
    checked again, since the rules may have changed in a year: an old input that no longer
    passes is RenewalNotPossible too (the renewal button has no form to show field errors on).
    """
    policy = selectors.policy_to_renew_get(user=user, pk=policy_id)
    source = policy.issuance.quote_request if policy.issuance is not None else None
    if source is None:
        raise RenewalNotPossible(NO_SOURCE_MESSAGE)
    customer_id = policy.customer_id or source.customer_id
    data = {**source.input_data, "starts_on": renewal_starts_on(policy)}
    # One transaction: the calls start on commit, by which time the request names its customer.
    with transaction.atomic():
        try:
            quote_request = quote_request_create(user=user, product=policy.product, data=data)
        except InputInvalid as invalid:
            problems = "; ".join(text for texts in invalid.field_errors.values() for text in texts)
            raise RenewalNotPossible(f"{RULES_CHANGED_MESSAGE} {problems}") from None
        # The renewal stays where the policy is credited: the agency's staff renewing a
        # sub-agency's policy renew it for that sub-agency (a sub-agency user renews only theirs).
        credit = {"customer_id": customer_id, "sub_agency_id": quote_request.sub_agency_id or policy.sub_agency_id}
        QuoteRequest.objects.filter(pk=quote_request.pk).update(**credit)
        quote_request.customer_id, quote_request.sub_agency_id = credit["customer_id"], credit["sub_agency_id"]
    return quote_request


def quote_request_after_policy(*, user: User, public_id: UUID | str, policy_id: int) -> QuoteRequest:
    """The same risk as the request, quoted again to start the day the overlapping policy ends
    ("a start after it ends"): the agent's other way out of two trafik policies at once."""
    source = selectors.quote_request_get(user=user, public_id=public_id)
    policy = policy_get(user=user, pk=policy_id)
    with transaction.atomic():
        try:
            quote_request = quote_request_create(
                user=user,
                product=source.product,
                data={**source.input_data, "starts_on": renewal_starts_on(policy)},
                customer=source.customer,
            )
        except InputInvalid as invalid:
            problems = "; ".join(text for texts in invalid.field_errors.values() for text in texts)
            raise RenewalNotPossible(f"{RULES_CHANGED_MESSAGE} {problems}") from None
    return quote_request
