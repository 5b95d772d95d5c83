"""The desk's outreach: consent on the customer page, sending the offer from the quote request
page, and the public offer page the SMS links to.

The desk views read the customer and the quote request through their own apps' agency-scoped
selectors, so another agency's is "not found" (404) like an unknown one, and only the owning
agency writes. The public page needs no login by design: the signed token is the key.
"""

from __future__ import annotations

from collections.abc import Sequence
from uuid import UUID

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_POST

from agencies.scope import may_act_on
from customers import selectors as customer_selectors
from customers.models import Customer
from insurehub.desk_errors import desk_errors
from insurehub.request_types import AuthenticatedHttpRequest
from outreach import selectors
from outreach.forms import ConsentForm, OfferSendForm, form_errors_text
from outreach.models import Channel, OutboundMessage
from outreach.services.consent import channel_consent_record
from outreach.services.offer import LinkExpired, OpenedLink, offer_document, offer_link_open, offer_send
from outreach.services.sending import CHANNEL_NAMES_TR
from quotes import selectors as quote_selectors
from quotes.models import QuoteRequest
from quotes.services.comparison import comparison_build

# What the pages list of a customer's or a request's history; older rows stay in the admin.
HISTORY_LIMIT = 50


def _may_act_on(request: HttpRequest, record: Customer | QuoteRequest) -> bool:
    """Writing (consent, sending) is the record's own scope's: its agency, and its sub-agency's
    users if it is credited to one (`agencies.scope`); head office reads only."""
    return may_act_on(request.user, agency_id=record.agency_id, sub_agency_id=record.sub_agency_id)


def customer_outreach_section(request: HttpRequest, customer: Customer) -> str:
    """The customer page's "İletişim izinleri" and "Gönderilen mesajlar" cards."""
    context = {
        "customer": customer,
        "states": selectors.consent_states(customer=customer),
        "history": selectors.consent_history(customer=customer)[:HISTORY_LIMIT],
        "sent": selectors.customer_messages(customer=customer)[:HISTORY_LIMIT],
        "form": ConsentForm(),
        "may_write": _may_act_on(request, customer),
    }
    return render_to_string("outreach/_customer_outreach.html", context, request=request)


def quote_request_offer_section(request: HttpRequest, quote_request: QuoteRequest) -> str:
    """The quote request page's "Müşteriye gönder" card: the consented channels, and what went."""
    customer = quote_request.customer
    context = {
        "quote_request": quote_request,
        "customer": customer,
        "states": selectors.consent_states(customer=customer) if customer else [],
        "sent": selectors.quote_request_messages(quote_request=quote_request)[:HISTORY_LIMIT],
        "may_send": customer is not None and _may_act_on(request, quote_request),
    }
    return render_to_string("outreach/_quote_request_offer.html", context, request=request)


def renewal_reminder_customer_notes(reminders: Sequence[object]) -> dict[int, str]:
    """ "müşteriye SMS: gönderildi" for each reminder the customer was messaged on (renewals list)."""
    notes: dict[int, list[str]] = {}
    rows = OutboundMessage.objects.filter(renewal_reminder__in=[getattr(r, "pk", None) for r in reminders])
    for message in rows.order_by("channel"):
        assert message.renewal_reminder_id is not None
        channel = CHANNEL_NAMES_TR[Channel(message.channel)]
        notes.setdefault(message.renewal_reminder_id, []).append(
            f"müşteriye {channel}: {message.get_status_display().lower()}"
        )
    return {pk: ", ".join(texts) for pk, texts in notes.items()}


@login_required
@require_POST
@desk_errors
def consent_record(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    customer = customer_selectors.customer_get_for_edit(user=request.user, pk=pk)
    form = ConsentForm(request.POST)
    back = reverse("customer_detail", args=[customer.pk]) + "#iletisim-izinleri"
    if not form.is_valid():
        messages.error(request, form_errors_text(form))
        return redirect(back)
    data = form.cleaned_data
    with desk_errors(form) as outcome:
        event = channel_consent_record(
            user=request.user,
            customer=customer,
            channel=data["channel"],
            given=data["action"] == "give",
            method=data["method"],
        )
    if outcome.ok:
        channel = CHANNEL_NAMES_TR[Channel(event.channel)]
        done = f"{channel} izni kaydedildi." if event.given else f"{channel} izninin geri çekildiği kaydedildi."
        messages.success(request, done[:1].upper() + done[1:])
    else:
        messages.error(request, form_errors_text(form) or outcome.message)
    return redirect(back)


@login_required
@require_POST
@desk_errors
def offer_send_view(request: AuthenticatedHttpRequest, public_id: UUID) -> HttpResponse:
    quote_request = quote_selectors.quote_request_get(user=request.user, public_id=public_id)
    if not _may_act_on(request, quote_request):
        raise Http404("Teklif talebi bulunamadı.")  # read across agencies, never sent for one
    form = OfferSendForm(request.POST)
    back = reverse("quote_request_detail", args=[quote_request.public_id]) + "#musteriye-gonder"
    if not form.is_valid():
        messages.error(request, form_errors_text(form))
        return redirect(back)
    with desk_errors(form) as outcome:
        message = offer_send(user=request.user, quote_request=quote_request, channel=form.cleaned_data["channel"])
    if not outcome.ok:
        messages.error(request, form_errors_text(form) or outcome.message)
    elif message.status == OutboundMessage.Status.SENT:
        channel = CHANNEL_NAMES_TR[Channel(message.channel)]
        messages.success(request, f"Teklif {channel} ile gönderildi: {message.recipient}")
    else:
        messages.error(request, f"Teklif gönderilemedi: {message.error} (kod {message.provider_code})")
    return redirect(back)


@login_required
@require_GET
@desk_errors
def offer_download(request: AuthenticatedHttpRequest, public_id: UUID) -> HttpResponse:
    """The offer PDF as the customer gets it, for the agent to look at or hand over."""
    quote_request = quote_selectors.quote_request_get(user=request.user, public_id=public_id)
    if not comparison_build(request=quote_request).columns:
        raise Http404("Gönderilecek teklif yok.")
    document = offer_document(quote_request=quote_request, agent=request.user)
    return _pdf_response(document.content, document.filename)


def _pdf_response(content: bytes, filename: str) -> HttpResponse:
    response = HttpResponse(content, content_type="application/pdf")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


def _opened(token: str) -> OpenedLink:
    try:
        return offer_link_open(token=token)
    except OutboundMessage.DoesNotExist as error:
        raise Http404("Teklif bulunamadı.") from error


@never_cache
@require_GET
def offer_public(request: HttpRequest, token: str) -> HttpResponse:
    """ "/teklif/<token>/": the offer the SMS linked, without a login (public by design)."""
    try:
        opened = _opened(token)
    except LinkExpired:
        return render(request, "outreach/offer_link_gone.html", status=410)
    quote_request = opened.quote_request
    comparison = comparison_build(request=quote_request)
    context = {
        "quote_request": quote_request,
        "columns": [column for column in comparison.columns if not column.expired],
        "contact": selectors.agency_contact(agency_id=quote_request.agency_id),
        "token": token,
    }
    response = render(request, "outreach/offer_public.html", context)
    response["X-Robots-Tag"] = "noindex, nofollow"  # a customer's offer is nobody's search result
    return response


@never_cache
@require_GET
def offer_public_pdf(request: HttpRequest, token: str) -> HttpResponse:
    try:
        opened = _opened(token)
    except LinkExpired:
        return render(request, "outreach/offer_link_gone.html", status=410)
    document = offer_document(quote_request=opened.quote_request, agent=opened.message.sent_by)
    return _pdf_response(document.content, document.filename)
