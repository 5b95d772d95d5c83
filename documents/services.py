"""Policy documents: fetch each policy's PDF from its insurer in the background and keep it.

Follows `quotes.services.issuance` and `sync.services`: the `PolicyDocument` record is stored
before anything is sent, and each IN_FLIGHT is exactly one insurer call (`attempt_limit=1`), so
the record's state machine is the only retry layer. "Not ready yet" (`ErrorKind.NOT_READY`) is a
wait the insurer asks for, not a failure: the record waits PENDING for as long as the insurer
said (`next_wait`) without using up a try. A permanent refusal (say, the insurer does not know
the policy) is FAILED; the rest retry and become DEFERRED past the cap. FAILED and DEFERRED
records are dead letters, replayed from the admin; the agency's "Yeniden al" re-fetches any
finished record.

The PDF goes through Django's storage API (`default_storage`: local disk, or an S3-compatible
store when configured) under a name no one has a URL for: it is served only by the views in
this app, to the policy's agency.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable
from functools import partial

from django.conf import settings
from django.contrib.auth.models import User
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.db import transaction
from django.utils import timezone
from django.utils.text import get_valid_filename

from agencies.scope import agency_of, scoped
from documents.models import PolicyDocument
from documents.notices import notify_document_ready
from insurehub import change_feed
from insurehub.errors import Conflict
from integrations.answers.results import Document
from integrations.answers.taxonomy import ErrorKind, InsurerError
from integrations.calling.calls import endpoint_for_account, insurer_operation_run
from integrations.calling.engine import Outcome
from integrations.operations import Operation
from integrations.retry_policies import RetryPolicy, policy_for
from policies.models import Policy
from quotes.live import version_of
from work.dispatch import work_send
from work.item import WorkState
from work.registry import WorkRegistration, work_kind_register
from work.services import (
    WorkKind,
    work_claim,
    work_fresh_tries,
    work_mark_submitted,
    work_try,
)

logger = logging.getLogger(__name__)

POLICY_DOCUMENT = Operation.POLICY_DOCUMENT.value
FINISHED_STATES = (WorkState.SUBMITTED, WorkState.FAILED, WorkState.DEFERRED)
# Every stored PDF is one, whatever the insurer's header said: `Document` checked the %PDF- magic,
# and the header is never echoed to a browser (an insurer's `text/html` would be served as a page).
PDF_CONTENT_TYPE = "application/pdf"
STORAGE_DIR = "policy-documents"

# Margin on top of the longest a live worker can spend on one try before its lease is taken back.
LEASE_MARGIN_SECONDS = 30.0
# The pump looks for policies without a document record this often, this many at a time
# (imported policies, policies issued before documents existed): the insurers get them paced.
MISSING_SCAN_INTERVAL_SECONDS = 60.0
MISSING_SCAN_LIMIT = 100


class DocumentRefused(Conflict):
    """The platform will not re-fetch this document now; the message is for the agent, in Turkish."""


# --- asking for a document -------------------------------------------------------------------


def document_request(*, policy: Policy) -> PolicyDocument:
    """The policy's document record, stored QUEUED and handed to a worker if it is new.

    Idempotent: a second call (a replayed issuance, the missing-documents scan racing the
    issuance hook) finds the record already stored, whatever its state, and sends nothing.
    """
    return _document_request(policy)[0]


def _document_request(policy: Policy) -> tuple[PolicyDocument, bool]:
    document, created = PolicyDocument.objects.get_or_create(
        policy=policy,
        defaults={"agency_id": policy.agency_id, "payload": _payload(policy)},
    )
    if created:
        work_send(PolicyDocument, [document.pk])
    return document, created


def _payload(policy: Policy) -> dict[str, str]:
    return {"policy_no": policy.policy_no, "insurer": policy.insurer.code, "product": policy.product}


def documents_request_missing(*, limit: int = 500) -> int:
    """Give every policy that has no document record one (imported policies, policies issued
    before documents existed); returns how many were stored. Policies whose account or insurer
    is switched off are left for when they are on again: their calls could only fail."""
    policies = (
        Policy.objects.filter(document__isnull=True, account__is_active=True, insurer__is_active=True)
        .select_related("insurer")
        .order_by("pk")[:limit]
    )
    stored = sum(_document_request(policy)[1] for policy in policies)
    if stored:
        logger.info("documents: %s policies without a document record queued", stored)
    return stored


def document_refetch(*, user: User, policy_id: int) -> PolicyDocument:
    """The agency asks for its policy's PDF again ("Yeniden al").

    Only the policy's own agency may (a re-fetch spends that agency's insurer account; a
    head-office reader with `quotes.view_all_agencies` may download but not re-fetch), and a
    sub-agency user only their sub-agency's (`agencies.scope`): another agency's (or
    sub-agency's) policy raises `Policy.DoesNotExist`, like an unknown one. A finished record goes
    back to QUEUED with a fresh set of tries and keeps its current file until the new one is
    stored; a record still being fetched is left as it is (asking twice sends nothing twice).
    """
    agency = agency_of(user)
    policy = scoped(Policy.objects.select_related("insurer"), user=user, acting=True).get(pk=policy_id)
    if not agency.is_active:
        raise DocumentRefused("Acenteniz pasif durumda; poliçe belgesi alınamaz.")
    document = document_request(policy=policy)
    now = timezone.now()
    moved = PolicyDocument.objects.filter(pk=document.pk, state__in=FINISHED_STATES).update(
        **work_fresh_tries(now), payload=_payload(policy)
    )
    if moved:
        change_feed.publish(DOCUMENT_TOPIC, document.pk)
        work_send(PolicyDocument, [document.pk])
        logger.info("policy document %s: re-fetch asked by %s", document.pk, user.pk)
    document.refresh_from_db()
    return document


def document_work_register() -> None:
    """Policy documents as a kind of durable work (called from `DocumentsConfig.ready`); their
    dead letters replay through the one replay path (`work.replay.dead_letters_replay`)."""
    work_kind_register(
        WorkRegistration(
            name="document",
            model=PolicyDocument,
            task="documents.tasks.document_process",
            pump_hook=_missing_documents_scan_now_and_then,
        )
    )


# --- one try -----------------------------------------------------------------------------------


# The change feed's topic for a document record (key: its pk); `documents.apps` registers its versions.
DOCUMENT_TOPIC = "document"
DOCUMENT_VERSION_FIELDS = ("state", "file", "error_message")


def document_versions(document_ids: Iterable[int]) -> dict[int, str]:
    """A short name for what the document status fragment shows of each record, in one query."""
    ids = list(document_ids)
    rows = PolicyDocument.objects.filter(pk__in=ids).values_list("pk", *DOCUMENT_VERSION_FIELDS)
    found = {pk: version_of(fields) for pk, *fields in rows}
    return {pk: found.get(pk, "") for pk in ids}


def document_process(document_id: int) -> str:
    """One try for one record: claim it, ask the insurer once, store the PDF; returns the state.

    A wait ("not ready yet", a throttle, a retry) is not slept through here: the record goes
    PENDING and the pump queues it again when it is due.
    """
    document = PolicyDocument.objects.select_related("policy__account__insurer").get(pk=document_id)
    insurer_code = document.policy.account.insurer.code
    policy = policy_for(insurer_code, POLICY_DOCUMENT)
    if not work_claim(PolicyDocument, document_id, lease_seconds=_lease_seconds(policy)):
        return _state_of(document_id)
    document.refresh_from_db()
    state = work_try(DOCUMENT_WORK, document, insurer_code=insurer_code, policy=policy)
    # The policy page's document status (its stream) hears of it as soon as it is stored.
    change_feed.publish(DOCUMENT_TOPIC, document_id)
    return state


def _lease_seconds(policy: RetryPolicy) -> float:
    """Longer than a live worker can take: a try may be a token call and the call (twice, when a
    token expired; Deniz's redirect is a second request), each bounded by the timeouts."""
    per_request = policy.attempt_timeout + settings.INSURER_CONNECT_TIMEOUT
    return min(policy.deadline, 4 * per_request) + LEASE_MARGIN_SECONDS


def _document_call(document: PolicyDocument, permit: str) -> Outcome:
    account = document.policy.account
    if not account.is_active:
        # Switched off after the record was queued: fail visibly, replayable once it is on again.
        error = InsurerError(
            ErrorKind.NOT_ALLOWED, provider_code="ACCOUNT_INACTIVE", message="Acentenin bu şirketteki hesabı pasif."
        )
        return Outcome(result=None, error=error, attempts=0)
    return insurer_operation_run(
        endpoint=endpoint_for_account(account),
        operation=POLICY_DOCUMENT,
        data={"policy_no": document.payload.get("policy_no") or document.policy.policy_no},
        product=document.policy.product,
        attempt_limit=1,
        attempt_offset=document.attempts,
        budget_spent=permit == "spent",
    )


def _document_stored(document: PolicyDocument, outcome: Outcome) -> None:
    """Store the PDF, then mark the record done under its lease, then drop the file it replaced.

    The new file is written first under its own name (the storage never overwrites: a taken name
    gets a suffix), so the old file stays downloadable until the record points at the new one,
    and a worker whose lease was taken back meanwhile removes only what it wrote itself.
    """
    pdf = outcome.result_as(Document)
    old_name = PolicyDocument.objects.values_list("file", flat=True).get(pk=document.pk)
    name = default_storage.save(storage_name(document), ContentFile(pdf.content))
    with transaction.atomic():
        marked = work_mark_submitted(
            document,
            file=name,
            content_type=PDF_CONTENT_TYPE,
            size=len(pdf.content),
            sha256=pdf.sha256,
            fetched_at=timezone.now(),
        )
        if not marked:
            transaction.on_commit(partial(_delete_file, name))
            return
        if old_name and old_name != name:
            transaction.on_commit(partial(_delete_file, old_name))
        transaction.on_commit(partial(_ready, document.pk))
    logger.info("policy document %s stored: %s bytes, sha256 %s", document.pk, len(pdf.content), pdf.sha256)


def storage_name(document: PolicyDocument) -> str:
    """`policy-documents/<agency>/<insurer>-<policy no>.pdf`, each part made safe for any storage.

    Nothing is served by this name (no media URL, a private bucket): the views read the file
    and check the agency first.
    """
    policy = document.policy
    agency = get_valid_filename(policy.agency.code) or str(policy.agency_id)
    stem = get_valid_filename(f"{policy.insurer.code}-{policy.policy_no}") or f"policy-{policy.pk}"
    return f"{STORAGE_DIR}/{agency}/{stem}.pdf"


def _delete_file(name: str) -> None:
    try:
        default_storage.delete(name)
    except Exception:  # a file left behind is untidy, never wrong: the record names the live one
        logger.exception("policy document file %s could not be deleted", name)


def _ready(document_id: int) -> None:
    document_ready(PolicyDocument.objects.select_related("policy", "agency").get(pk=document_id))


def document_ready(document: PolicyDocument) -> None:
    """Called once a document has been stored (first fetch or re-fetch), after the commit.

    The hook for "a document is ready" notifications (issue 13, item 7): send them from here.
    Whatever it does must not raise into the worker; the document is stored either way.
    """
    logger.info("policy document ready: policy %s (%s)", document.policy_id, document.policy.policy_no)
    try:
        notify_document_ready(document)
    except Exception:
        logger.exception("policy document %s: the ready notification failed", document.pk)


DOCUMENT_WORK = WorkKind(model=PolicyDocument, call=_document_call, on_success=_document_stored)


def _state_of(document_id: int) -> str:
    return PolicyDocument.objects.values_list("state", flat=True).get(pk=document_id)


# --- the pump --------------------------------------------------------------------------------


_last_missing_scan = float("-inf")


def _missing_documents_scan_now_and_then() -> None:
    """Once a minute, with the pump: policies without a document record get one."""
    global _last_missing_scan
    if time.monotonic() - _last_missing_scan >= MISSING_SCAN_INTERVAL_SECONDS:
        _last_missing_scan = time.monotonic()
        documents_request_missing(limit=MISSING_SCAN_LIMIT)
