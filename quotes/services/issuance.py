"""Poliçeleştirme: issue a chosen quote exactly once, whatever fails on the way.

The `Issuance` record, with its reference, is stored before the first call; a double click,
a second tab or a retry finds that record instead of making another. Each try is one call
(the record's state machine is the only retry layer), and every try after one that may have
reached the insurer asks the insurer for the state before sending again.

The customer's payment token is stored Fernet-encrypted (`payment_token_encrypted` in the
payload), decrypted only to build the insurer call, and dropped once it can no longer be used:
- SUBMITTED: at once, in the statement that marks the issuance submitted (`_store_policy`).
- FAILED: kept (encrypted) for `PAYMENT_TOKEN_RETENTION`, because a FAILED issuance is replayed
  from the admin after a fix and the admin has no way to ask the customer for a new token; past
  that, `issuance_payment_tokens_purge` drops it, and a replay then fails at once, without a
  call, asking for a new issuance (`PAYMENT_TOKEN_GONE_MESSAGE`).
- DEFERRED, or anything still open: kept, since the issuance may still be sent.
"""

from __future__ import annotations

import logging
import time
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.db.models import DurationField, ExpressionWrapper, F, QuerySet
from django.db.models.functions import Now
from django.utils import timezone

from agencies.scope import agency_of, scoped
from insurehub import change_feed
from insurehub.errors import Conflict, Invalid
from insurehub.masking import mask_and_cut
from integrations.answers import results
from integrations.answers.taxonomy import ErrorKind, InsurerError
from integrations.calling.calls import endpoint_for_account, insurer_operation_run, new_reference
from integrations.calling.engine import IssuanceHistory, Outcome
from integrations.credentials import decrypt_secret, encrypt_secret
from integrations.retry_policies import policy_for
from policies.models import Policy
from policies.periods import policy_period_store
from policies.signals import policy_issued
from quotes import selectors
from quotes.live import ISSUANCE_TOPIC
from quotes.models import InsurerQuote, Issuance
from quotes.notices import notify_issuance_outcome
from work.dispatch import work_send
from work.item import WorkState
from work.registry import WorkRegistration, work_kind_register
from work.services import (
    WorkKind,
    work_claim,
    work_mark_submitted,
    work_promote_one,
    work_stop_event,
    work_try,
)

logger = logging.getLogger(__name__)

# A worker keeps a record through retries whose wait is this short, instead of leaving it to the pump.
INLINE_RETRY_MAX_WAIT = 10.0
# Margin on top of the issuance deadline before a silent worker's lease is taken back.
LEASE_MARGIN_SECONDS = 30.0
# A task stops taking tries inline this long before django-q2's timeout would kill it.
TASK_TIMEOUT_MARGIN_SECONDS = 10.0
# What the agent and the admin read while an earlier send may have taken effect at the insurer.
UNKNOWN_OUTCOME_MESSAGE = "Sonuç bilinmiyor, sigorta şirketine soruluyor."
# How long a FAILED issuance keeps its encrypted payment token for a replay.
PAYMENT_TOKEN_RETENTION = timedelta(days=7)
# The purge runs from the pump, which runs every second: at most this often.
PAYMENT_TOKEN_PURGE_INTERVAL_SECONDS = 60.0
PAYMENT_TOKEN_GONE_MESSAGE = (
    "Ödeme bilgisi saklama süresi dolduğu için silindi; yeni ödeme bilgisiyle yeniden poliçeleştirin."  # noqa: S105
)
ENCRYPTED_TOKEN_KEY = "payment_token_encrypted"  # noqa: S105 - a payload key


class IssuanceRefused(Conflict):
    """The platform will not issue this quote; the message is for the agent, in Turkish."""


# The agent's choice when a trafik policy in force overlaps the new one's period.
CANCEL_OLD = "cancel_old"
OVERLAP_MESSAGE = (
    "Bu plakada {insurer} trafik poliçesi {policy_no} ({period}) yürürlükte ve yeni poliçenin dönemiyle "
    "çakışıyor: aynı araç için iki trafik poliçesi düzenlenemez. Eski poliçenin araç satışı nedeniyle yeni "
    "poliçenin başlangıcından itibaren iptal edilmesini seçin ya da eski poliçe bitince başlayan yeni teklif alın."
)


class IssuanceOverlaps(IssuanceRefused):
    """A trafik policy in force overlaps the new one and the agent has not said what to do."""

    def __init__(self, policy: Policy) -> None:
        period = (
            f"{policy.starts_on:%d.%m.%Y} – {policy.ends_on:%d.%m.%Y}" if policy.starts_on and policy.ends_on else "?"
        )
        super().__init__(
            OVERLAP_MESSAGE.format(insurer=policy.insurer.name, policy_no=policy.policy_no, period=period),
            field_errors={"overlap": "Çakışan poliçe için bir seçim yapın."},
        )
        self.policy = policy


def issuance_start(
    *,
    user: User,
    insurer_quote_id: int,
    payment_token: str,
    installments: int | None = None,
    overlap: str = "",
) -> Issuance:
    """The agent confirmed: store the issuance (or find the one already started) and queue it.

    Only the quote's own agency issues it (no permission crosses agencies here; a sub-agency user
    only their sub-agency's quotes: `agencies.scope`), and only while
    that agency is active: a deactivated agency's insurer accounts are not to be used.
    `installments` is one of the counts the quote offered (none: peşin). A trafik policy in force
    whose period overlaps the new one's is refused (`IssuanceOverlaps`) unless the agent chose
    `overlap="cancel_old"`: the old one is then cancelled (reason vehicle_sold, from the new
    one's start) once the new one is issued.
    """
    agency = agency_of(user)
    if not agency.is_active:
        raise IssuanceRefused("Acenteniz pasif durumda; poliçeleştirme yapılamaz.")
    quote = scoped(
        InsurerQuote.objects.select_related("request", "insurer"),
        user=user,
        agency="request__agency",
        sub_agency="request__sub_agency",
        acting=True,
    ).get(pk=insurer_quote_id)
    existing = Issuance.objects.filter(insurer_quote=quote).first()
    if existing is not None:
        return existing
    held = request_held_message(quote_request_id=quote.request_id)
    if held:
        # Another insurer's quote of this request was picked (the constraint would refuse it too,
        # but only after the checks below, with less to say).
        raise IssuanceRefused(held)
    if quote.state != InsurerQuote.State.SUCCEEDED:
        raise IssuanceRefused("Bu şirketten geçerli bir teklif yok.")
    if quote.valid_until is None or quote.valid_until <= timezone.now():
        raise IssuanceRefused("Teklifin süresi dolmuş. Lütfen yeni teklif alın.")
    if not payment_token or not str(payment_token).strip():
        raise IssuanceRefused("Ödeme bilgisi eksik.")
    offered = offered_installments(quote)
    if installments not in (None, 1) and installments not in offered:
        counts = ", ".join(str(n) for n in offered) or "yalnız peşin"
        raise Invalid({"installments": f"Bu teklif bu taksit sayısını sunmuyor (sunulanlar: {counts})."})
    payload: dict[str, Any] = {
        "quote_no": quote.quote_no,
        ENCRYPTED_TOKEN_KEY: encrypt_secret(str(payment_token).strip()),
    }
    if installments and installments > 1:
        payload["installments"] = installments
    overlapping = selectors.policy_overlapping_for(quote_request=quote.request)
    if overlapping is not None and quote.request.product == "trafik":
        if overlap != CANCEL_OLD:
            raise IssuanceOverlaps(overlapping)
        payload["replaces_policy_id"] = overlapping.pk
    if quote.request.starts_on:
        payload["starts_on"] = quote.request.starts_on.isoformat()
    try:
        with transaction.atomic():
            issuance = Issuance.objects.create(
                insurer_quote=quote,
                quote_request=quote.request,
                agency=quote.request.agency,
                requested_by=user,
                reference=new_reference("IH"),
                payload=payload,
            )
            work_send(Issuance, [issuance.pk])
    except IntegrityError:
        # Two clicks raced: the other one stored it first. Hand back that one.
        existing = Issuance.objects.filter(insurer_quote=quote).first()
        if existing is not None:
            return existing
        raise IssuanceRefused(request_held_message(quote_request_id=quote.request_id) or IN_PROGRESS_MESSAGE) from None
    return issuance


IN_PROGRESS_MESSAGE = "Bu teklif talebi için başka bir poliçeleştirme zaten sürüyor."


def request_held_message(*, quote_request_id: int) -> str:
    """Why no other quote of this request may be issued now, as things stand; "" when any may.

    The policy decides first: once one exists the issuance is over, whatever record led to it,
    and the agent is told its number, never that something is still running."""
    policy = selectors.policy_issued_for(quote_request_id=quote_request_id)
    if policy is not None:
        return f"Bu teklif talebi için poliçe zaten düzenlendi: {policy.policy_no}."
    live = selectors.issuance_live_for(quote_request_id=quote_request_id)
    if live is None:
        return ""
    if live.state == WorkState.SUBMITTED:
        return f"Bu teklif talebi için poliçe zaten düzenlendi: {live.policy_no}."
    if live.state == WorkState.DEFERRED and live.maybe_sent:
        return (
            "Bu teklif talebinin poliçeleştirmesinin sonucu henüz bilinmiyor; poliçe düzenlenmiş olabilir. "
            "Sonuç netleşmeden başka bir şirketle poliçeleştirilemez."
        )
    if live.state == WorkState.DEFERRED:
        return (
            "Bu teklif talebinin poliçeleştirmesi durdu ve bir yetkilinin incelemesini bekliyor; "
            "o sonuçlanmadan başka bir şirketle poliçeleştirilemez."
        )
    return IN_PROGRESS_MESSAGE


def issuance_process(issuance_id: int) -> str:
    """Take the record through as many tries as are due now; returns the state it was left in.

    Short waits are kept inline, but never so many that the task could outlive django-q2's
    timeout (the cluster would kill it mid-call): past that, the pump takes the record back.
    Once the cluster is stopping no further try starts here: a try cut short by the stop has
    left the record PENDING and due, with `maybe_sent` if its send may have gone out, for the
    next worker (whose first call asks the insurer), and a wait is not slept through.
    """
    issuance = Issuance.objects.select_related("insurer_quote__account__insurer").get(pk=issuance_id)
    account = issuance.insurer_quote.account
    policy = policy_for(account.insurer.code, "issue_policy")
    lease = policy.deadline + LEASE_MARGIN_SECONDS
    task_ends = time.monotonic() + settings.Q_CLUSTER["timeout"] - TASK_TIMEOUT_MARGIN_SECONDS
    stopping = work_stop_event()
    while True:
        if not work_claim(Issuance, issuance_id, lease_seconds=lease):
            return Issuance.objects.get(pk=issuance_id).state
        issuance.refresh_from_db()
        state = work_try(ISSUANCE_WORK, issuance, insurer_code=account.insurer.code, policy=policy)
        # The agent's status page (its stream) hears of the try's end as soon as it is stored.
        change_feed.publish(ISSUANCE_TOPIC, issuance_id)
        if state in NOTIFIED_STATES:
            _notify_outcome(issuance_id)
        if state != WorkState.PENDING or stopping.is_set():
            return state
        due = Issuance.objects.values_list("next_attempt_at", flat=True).get(pk=issuance_id)
        wait = max((due - timezone.now()).total_seconds(), 0.0) if due else 0.0
        if wait > INLINE_RETRY_MAX_WAIT or time.monotonic() + wait + policy.deadline > task_ends:
            return state
        if stopping.wait(wait + 0.01) or not work_promote_one(Issuance, issuance_id):
            return Issuance.objects.get(pk=issuance_id).state


# Where an issuance ends for the agent who asked: issued, refused, or waiting for a person.
NOTIFIED_STATES = (WorkState.SUBMITTED, WorkState.FAILED, WorkState.DEFERRED)


def _notify_outcome(issuance_id: int) -> None:
    """Tell the agent, who may have left the page; a notification failing never costs the issuance."""
    try:
        notify_issuance_outcome(
            Issuance.objects.select_related("insurer_quote__insurer", "requested_by").get(pk=issuance_id)
        )
    except Exception:
        logger.exception("issuance %s: the outcome notification failed", issuance_id)


def payload_without_token(payload: dict) -> dict:
    """The payload as kept once the token may no longer be used: encrypted or clear, it goes."""
    return {key: value for key, value in payload.items() if key not in (ENCRYPTED_TOKEN_KEY, "payment_token")}


def issuance_call_data(issuance: Issuance) -> dict | None:
    """What the adapter is given: the payload with the token in clear, for this call only.
    A clear `payment_token` is still read (rows written before encryption); None when the
    token has been dropped."""
    payload = issuance.payload
    if payload.get(ENCRYPTED_TOKEN_KEY):
        return {**payload_without_token(payload), "payment_token": decrypt_secret(payload[ENCRYPTED_TOKEN_KEY])}
    if payload.get("payment_token"):
        return dict(payload)
    return None


def _issuance_call(issuance: Issuance, permit: str) -> Outcome:
    account = issuance.insurer_quote.account
    endpoint = endpoint_for_account(account)  # may raise (a credential that no longer decrypts)
    data = issuance_call_data(issuance)
    if data is None:
        if issuance.maybe_sent and not issuance.reference_refused:
            # A send whose outcome is open may have reached the insurer, and nothing can be sent
            # to ask about it: the outcome stays unknown (DEFERRED after the unknown cap).
            error = InsurerError(
                ErrorKind.UNCLASSIFIED,
                provider_code="PAYMENT_TOKEN_GONE",
                message=PAYMENT_TOKEN_GONE_MESSAGE,
                ambiguous=True,
            )
            return Outcome(result=None, error=error, attempts=0, outcome="unknown")
        # Replayed after the retention: nothing can be sent, and nothing was. Permanent.
        error = InsurerError(
            ErrorKind.VALIDATION, provider_code="PAYMENT_TOKEN_GONE", message=PAYMENT_TOKEN_GONE_MESSAGE
        )
        return Outcome(result=None, error=error, attempts=0, stop_reason="permanent")

    def before_send() -> None:
        # Written before anything leaves: if this worker dies mid-call, the next try looks first,
        # and knows how long ago the insurer may have started on it, by the database's clock.
        Issuance.objects.filter(pk=issuance.pk).update(maybe_sent=True, last_sent_at=Now())

    def replace_refused_reference() -> str:
        # The insurer refused the old reference for sure and holds nothing under it: the next
        # send goes under a new one, stored before it leaves (its send may be lost too).
        reference = new_reference("IH")
        moved = Issuance.objects.filter(
            pk=issuance.pk,
            state=WorkState.IN_FLIGHT,
            lease_expires_at=issuance.lease_expires_at,
            reference_refused=True,
        ).update(reference=reference, reference_refused=False, maybe_sent=False, last_sent_at=None)
        if not moved:
            raise RuntimeError(f"issuance {issuance.pk} is no longer this worker's; its reference is left as it is")
        issuance.reference = reference
        return reference

    history = IssuanceHistory(
        maybe_sent=issuance.maybe_sent,
        last_sent_ago=issuance_seconds_since_send(issuance.pk) if issuance.maybe_sent else None,
        reference_refused=issuance.reference_refused,
        on_send=before_send,
        new_reference=replace_refused_reference,
    )
    return insurer_operation_run(
        endpoint=endpoint,
        operation="issue_policy",
        data=data,
        product=issuance.quote_request.product,
        reference=issuance.reference,
        history=history,
        attempt_limit=1,
        attempt_offset=issuance.attempts,
        budget_spent=permit == "spent",
    )


def issuance_seconds_since_send(issuance_id: int) -> float | None:
    """How long ago the issuance's last send left, by the database's clock (the one that wrote
    `last_sent_at`): workers on several machines disagree about the time, and a worker whose
    clock is behind would otherwise see the insurer's settling time over too soon."""
    ago = (
        Issuance.objects.filter(pk=issuance_id, last_sent_at__isnull=False)
        .annotate(ago=ExpressionWrapper(Now() - F("last_sent_at"), output_field=DurationField()))
        .values_list("ago", flat=True)
        .first()
    )
    return None if ago is None else max(ago.total_seconds(), 0.0)


def _issuance_stored(issuance: Issuance, outcome: Outcome) -> None:
    _store_policy(issuance, issuance.insurer_quote.account, outcome.result_as(results.Policy))


def _issuance_note(issuance: Issuance, error: InsurerError, outcome: Outcome | None) -> str:
    """What a person reads while the outcome is open: never "failed" when a policy may exist."""
    maybe_sent = Issuance.objects.values_list("maybe_sent", flat=True).get(pk=issuance.pk)
    if maybe_sent and (outcome is None or outcome.outcome == "unknown" or error.ambiguous):
        return mask_and_cut(f"{UNKNOWN_OUTCOME_MESSAGE} ({error.provider_code}: {error.message})", 300)
    return error.message


ISSUANCE_WORK = WorkKind(
    model=Issuance,
    call=_issuance_call,
    on_success=_issuance_stored,
    looks_first=lambda issuance: issuance.maybe_sent,
    note=_issuance_note,
)


@transaction.atomic
def _store_policy(issuance: Issuance, account: Any, result: results.Policy) -> None:
    """The policy, its period and its customer, in the statement-group that marks the issuance
    submitted; the PDF is asked for right after (a durable record of its own)."""
    # The token goes in the same statement that marks the issuance submitted.
    payload = payload_without_token(issuance.payload)
    if not work_mark_submitted(issuance, policy_no=result.policy_no, payload=payload):
        return
    issuance.payload = payload
    request = issuance.quote_request
    policy, _ = Policy.objects.get_or_create(
        insurer=account.insurer,
        policy_no=result.policy_no,
        defaults={
            "agency": issuance.agency,
            "account": account,
            "product": request.product,
            "status": result.status.value,
            "issuance": issuance,
            "plate": request.plate,
            "owner_id": request.owner_id,
            "customer_id": request.customer_id,
            "premium": issuance.insurer_quote.premium,
            "installments": int(issuance.payload.get("installments") or 1),
            "sold_by_id": request.created_by_id,
            "sub_agency_id": request.sub_agency_id,
        },
    )
    policy_period_store(policy, result)
    # Whoever cares (its document, a cancellation of the policy it replaces, the commission)
    # hears it inside this transaction.
    policy_issued.send_robust(sender=Issuance, issuance=issuance, policy=policy)


def offered_installments(quote: InsurerQuote) -> list[int]:
    """The counts the quote offered beyond peşin (its answer's `installments`)."""
    plans = (quote.details or {}).get("installments") or []
    return sorted(
        {plan["count"] for plan in plans if isinstance(plan, dict) and isinstance(plan.get("count"), int)} - {1}
    )


def issuance_replay_held(queryset: QuerySet[Issuance]) -> dict[int, str]:
    """Refused issuances a replay must leave as they are, and why: their request has a policy by
    now, or another insurer's issuance under way (the agent picked again after the refusal).
    Sent back, such a record could never go live (one live issuance per request), and preparing
    it would already have changed the reference the agent was shown. A DEFERRED issuance is
    itself its request's live one: nothing holds it."""
    held = {}
    for pk, request_id in queryset.filter(state=WorkState.FAILED).values_list("pk", "quote_request_id"):
        reason = request_held_message(quote_request_id=request_id)
        if reason:
            held[pk] = reason
    return held


def issuance_replay_prepare(queryset: QuerySet[Issuance]) -> None:
    """Before dead issuances go back to the queue (the one replay path: `dead_letters_replay`,
    behind the admin's action and `replay_dead_letters` alike).

    Every issuance that was ever sent asks the insurer first, under the reference it was sent
    with, before anything else: a DEFERRED one keeps `maybe_sent` (its outcome is unknown); a
    FAILED one, which the insurer refused for sure, is marked `reference_refused` too, so that
    once the insurer has said it holds nothing under the old reference, the next send goes under
    a new one (Deniz and Anka would answer the old one with the refusal again). Only a FAILED
    issuance that was never sent (nothing can be at the insurer) gets a new reference at once.
    """
    failed = queryset.filter(state=WorkState.FAILED)
    failed.filter(maybe_sent=True).update(reference_refused=True)
    for pk in failed.filter(maybe_sent=False).values_list("pk", flat=True):
        Issuance.objects.filter(pk=pk, state=WorkState.FAILED, maybe_sent=False).update(
            reference=new_reference("IH"), reference_refused=False, last_sent_at=None
        )


def issuance_payment_tokens_purge(*, now: Any = None) -> int:
    """Drop the payment tokens of issuances FAILED longer ago than the retention, and of any
    SUBMITTED one still holding one (a row written before tokens were dropped there)."""
    now = now or timezone.now()
    stale = Issuance.objects.filter(payload__has_key=ENCRYPTED_TOKEN_KEY) | Issuance.objects.filter(
        payload__has_key="payment_token"
    )
    stale = stale.filter(state=WorkState.SUBMITTED) | stale.filter(
        state=WorkState.FAILED, finished_at__lt=now - PAYMENT_TOKEN_RETENTION
    )
    purged = 0
    for pk, payload in stale.values_list("pk", "payload"):
        # Guarded on the state: a replay that reopened it meanwhile keeps its token.
        purged += Issuance.objects.filter(pk=pk, state__in=(WorkState.SUBMITTED, WorkState.FAILED)).update(
            payload=payload_without_token(payload)
        )
    return purged


_last_purge = 0.0


def issuance_work_register() -> None:
    """Issuances as a kind of durable work (called from `QuotesConfig.ready`)."""
    work_kind_register(
        WorkRegistration(
            name="issuance",
            model=Issuance,
            task="quotes.tasks.issuance_process",
            pump_hook=_payment_tokens_purge_now_and_then,
            replay_held=issuance_replay_held,
            replay_prepare=issuance_replay_prepare,
        )
    )


def _payment_tokens_purge_now_and_then() -> None:
    """Once a minute, with the pump: payment tokens past their retention are dropped."""
    global _last_purge
    if time.monotonic() - _last_purge >= PAYMENT_TOKEN_PURGE_INTERVAL_SECONDS:
        _last_purge = time.monotonic()
        issuance_payment_tokens_purge()
