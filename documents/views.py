"""The policy's PDF on the desk: download, state and "Yeniden al" (re-fetch).

Served only through these views (never a media URL): the agency of the policy, or a reader
with `quotes.view_all_agencies`, downloads; only the policy's own agency re-fetches. Anything
else answers 404, exactly like an unknown policy.
"""

from __future__ import annotations

import logging
from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import FileResponse, Http404, HttpResponse
from django.http.response import HttpResponseBase
from django.shortcuts import redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_GET, require_POST

from documents import selectors
from documents.models import PolicyDocument
from documents.services import DOCUMENT_TOPIC, PDF_CONTENT_TYPE, document_refetch, document_versions
from insurehub.desk_auth import fragment_login_required
from insurehub.desk_errors import desk_errors
from insurehub.request_types import AuthenticatedHttpRequest
from policies.models import Policy
from quotes import live
from quotes.views.common import live_stream_response
from work.item import OPEN_STATES

logger = logging.getLogger(__name__)


def document_status_context(request: AuthenticatedHttpRequest, policy: Policy, *, refusal: str = "") -> dict[str, Any]:
    """What `documents/_document_status.html` shows for one policy and this user."""
    document = selectors.document_of(policy)
    return {
        "policy": policy,
        "document": document,
        "in_progress": document is not None and document.state in OPEN_STATES,
        "has_file": document is not None and bool(document.file),
        "may_refetch": selectors.may_refetch(user=request.user, policy=policy),
        "refusal": refusal,
        # The page's version travels to its stream (quotes/live.py), which sends only what it lacks.
        "status_version": document_versions([document.pk])[document.pk] if document is not None else "",
        # Where a re-fetch without htmx returns: the page the fragment is on, not the fragment's URL.
        "back_url": (request.htmx.current_url_abs_path if getattr(request, "htmx", False) else None)
        or request.get_full_path(),
    }


@login_required
@require_GET
@desk_errors
def policy_document_download(request: AuthenticatedHttpRequest, pk: int) -> FileResponse:
    return document_file_response(selectors.document_downloadable(user=request.user, policy_id=pk))


def document_file_response(document: PolicyDocument) -> FileResponse:
    """The PDF as an attachment, never cached by a shared cache, never sniffed as anything else."""
    try:
        handle = selectors.document_file_open(document)
    except (FileNotFoundError, OSError):
        logger.exception("policy document %s: file %s missing from storage", document.pk, document.file.name)
        raise Http404("Poliçe belgesi bulunamadı.") from None
    response = FileResponse(
        handle,
        as_attachment=True,
        filename=selectors.document_download_name(document),
        content_type=PDF_CONTENT_TYPE,
    )
    response["Cache-Control"] = "private, no-store"
    response["X-Content-Type-Options"] = "nosniff"
    return response


@fragment_login_required
@require_GET
@desk_errors
def policy_document_status(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    """The document state alone, polled while the PDF is being fetched."""
    policy = selectors.policy_for_document(user=request.user, policy_id=pk)
    return render(request, "documents/_document_status.html", document_status_context(request, policy))


@fragment_login_required
@require_GET
@desk_errors
def policy_document_stream(request: AuthenticatedHttpRequest, pk: int) -> HttpResponseBase:
    """The document state pushed as server-sent events while the PDF is fetched (quotes/live.py).

    Checked before the first byte like the fragment (another agency's policy is a 404), under
    the same open-stream caps as the results' stream; a policy with no document record has
    nothing to follow (404: the page's poll, if any, carries on)."""
    policy = selectors.policy_for_document(user=request.user, policy_id=pk)
    document = selectors.document_of(policy)
    if document is None:
        raise Http404("Poliçe belgesi bulunamadı.")
    back_url = reverse("policy_detail", args=[policy.pk])

    def rendered(seen_at: float | None) -> live.Rendered:
        context = document_status_context(request, policy)
        # A re-fetch without htmx returns to the policy page, not to this stream's address.
        context["back_url"] = back_url
        html = render_to_string("documents/_document_status.html", context, request=request)
        return live.Rendered(html=html, version=context["status_version"], all_final=not context["in_progress"])

    seen = request.headers.get("Last-Event-ID") or request.GET.get("v", "")
    events = live.status_events(topic=DOCUMENT_TOPIC, key=document.pk, render=rendered, seen_version=seen[:32])
    return live_stream_response(request, events)


@fragment_login_required
@require_POST
@desk_errors
def policy_document_refetch(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    """ "Yeniden al": the fragment again for htmx, else back to the page the button was on."""
    policy = selectors.policy_for_document(user=request.user, policy_id=pk)
    if not selectors.may_refetch(user=request.user, policy=policy):
        # A re-fetch spends the policy's own agency's insurer account: to any other reader (a
        # head office's included) this button's address is an unknown policy.
        raise Http404("Poliçe bulunamadı.")
    with desk_errors() as outcome:
        document_refetch(user=request.user, policy_id=pk)
    if getattr(request, "htmx", False):
        context = document_status_context(request, policy, refusal=outcome.message)
        return render(request, "documents/_document_status.html", context, status=outcome.status)
    back = request.POST.get("next", "")
    if not url_has_allowed_host_and_scheme(back, allowed_hosts={request.get_host()}, require_https=request.is_secure()):
        back = "policy_list"
    return redirect(back)
