"""The offer sent to the customer: by e-mail with the PDF attached, or by SMS with a link.

The SMS carries a signed link (`TimestampSigner`) to /teklif/<token>/, a page that opens without
a login and expires after OFFER_LINK_MAX_AGE_DAYS. The token signs the message's own random id,
never the customer's identity number or the quote request's id: a forwarded link opens that one
offer and says nothing about anyone else.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from uuid import UUID

from django.conf import settings
from django.contrib.auth.models import User
from django.core import signing
from django.urls import reverse

from customers.models import CustomerErasure
from insurehub.errors import Forbidden, Invalid
from insurehub.masking import mask_and_cut
from outreach import selectors
from outreach.models import Channel, OutboundMessage
from outreach.services.offer_pdf import OfferPdf, offer_pdf
from outreach.services.sending import consent_required, contact_text, masked_recipient, message_deliver, recipient_of
from quotes.models import QuoteRequest
from quotes.services.comparison import comparison_build
from quotes.templatetags.desk import product_label

LINK_SALT = "outreach.offer-link"
OWN_AGENCY_TR = "Teklifi yalnızca talebin kendi acentesi gönderebilir."


def offer_link_token(message: OutboundMessage) -> str:
    return signing.TimestampSigner(salt=LINK_SALT).sign(str(message.public_id))


def link_max_age() -> timedelta:
    return timedelta(days=settings.OFFER_LINK_MAX_AGE_DAYS)


@dataclass(frozen=True)
class OpenedLink:
    message: OutboundMessage
    quote_request: QuoteRequest


class LinkExpired(Exception):
    """The link was ours, but older than OFFER_LINK_MAX_AGE_DAYS (the page answers 410)."""


def offer_link_open(*, token: str) -> OpenedLink:
    """The offer a link names. Tampered or unknown: OutboundMessage.DoesNotExist (404);
    expired: LinkExpired (410). Never anything else, whatever the token holds."""
    signer = signing.TimestampSigner(salt=LINK_SALT)
    try:
        value = signer.unsign(token, max_age=link_max_age())
    except signing.SignatureExpired as error:
        raise LinkExpired from error
    except signing.BadSignature as error:
        raise OutboundMessage.DoesNotExist from error
    try:
        public_id = UUID(value)
    except ValueError as error:
        raise OutboundMessage.DoesNotExist from error
    message = OutboundMessage.objects.select_related("quote_request__agency", "quote_request__customer").get(
        public_id=public_id, kind=OutboundMessage.Kind.OFFER
    )
    if message.status == OutboundMessage.Status.FAILED:
        raise OutboundMessage.DoesNotExist  # the customer never got it: nothing to open
    if message.customer_id and CustomerErasure.objects.filter(customer_id=message.customer_id).exists():
        raise OutboundMessage.DoesNotExist  # erased on their request (KVKK): the link names no one now
    assert message.quote_request is not None
    return OpenedLink(message=message, quote_request=message.quote_request)


def offer_document(*, quote_request: QuoteRequest, agent: object) -> OfferPdf:
    contact = selectors.agency_contact(agency_id=quote_request.agency_id)
    return offer_pdf(quote_request=quote_request, contact=contact, agent=agent)


def offer_send(*, user: User, quote_request: QuoteRequest, channel: str) -> OutboundMessage:
    """Send the offer of `quote_request` to its customer on `channel`, if they consent to it.

    Refused (Invalid, in Turkish, naming the channel) without a customer, without consent,
    without a contact on that channel, or with no quote left to offer. A provider's refusal is
    no exception: the message is stored failed, with the provider's code and its reason.
    """
    profile = getattr(user, "agent_profile", None)
    if profile is None or profile.agency_id != quote_request.agency_id:
        raise Forbidden(OWN_AGENCY_TR)
    if channel not in Channel.values:
        raise Invalid({"channel": "Kanal: e-posta ya da SMS seçin."})
    customer = quote_request.customer
    if customer is None:
        raise Invalid({"channel": "Bu teklif talebi bir müşteriye bağlı değil: gönderilecek kimse yok."})
    consent_required(customer=customer, channel=channel)
    to = recipient_of(customer, channel)
    if not [column for column in comparison_build(request=quote_request).columns if not column.expired]:
        raise Invalid({"channel": "Gönderilecek geçerli teklif yok."})
    contact = selectors.agency_contact(agency_id=quote_request.agency_id)
    product = product_label(quote_request.product)
    message = OutboundMessage(
        agency_id=quote_request.agency_id,
        customer=customer,
        kind=OutboundMessage.Kind.OFFER,
        channel=channel,
        quote_request=quote_request,
        recipient=masked_recipient(to, channel),
        sent_by=user,
    )
    if channel == Channel.EMAIL:
        document = offer_document(quote_request=quote_request, agent=user)
        message.subject = mask_and_cut(f"{product} sigorta teklifiniz — {quote_request.agency.name}", 200)
        message.body = (
            f"Sayın {customer.name},\n\n{product} sigortası için aldığımız teklifler ekteki PDF'te.\n"
            f"Sorularınız için bize ulaşabilirsiniz.\n\n{contact_text(contact)}\n"
        )
        message.save()
        return message_deliver(
            message=message,
            to=to,
            attachment=(document.filename, document.content, "application/pdf"),
            reply_to=contact.email,
        )
    message.save()  # the link signs the row's id: stored first, then written
    link = settings.SITE_URL.rstrip("/") + reverse("offer_public", args=[offer_link_token(message)])
    message.body = (
        f"{product} sigorta teklifiniz hazır: {link} "
        f"(bağlantı {settings.OFFER_LINK_MAX_AGE_DAYS} gün geçerli). {contact_text(contact)}"
    )
    message.save(update_fields=["body"])
    return message_deliver(message=message, to=to)
