"""İptal: cancel a policy at its insurer exactly once, whatever fails on the way.

Cancelling moves money (the insurer pays a refund back), so it is treated like issuance: the
`Cancellation` record, with its reference, is stored before the first call; each try is one
call (the record's state machine is the only retry layer); after an ambiguous failure the same
reference is sent again — every insurer answers a repeat with the first result — and never a
new one, not even on a replay. An unknown outcome is never FAILED: it waits as DEFERRED.
"""

from __future__ import annotations

import logging
import time
from datetime import date
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.db.models.functions import Now
from django.urls import reverse
from django.utils import timezone

from agencies.scope import agency_of, may_act_on
from insurehub.errors import Conflict, Invalid
from insurehub.masking import mask_and_cut
from integrations.answers import results
from integrations.answers.taxonomy import InsurerError
from integrations.calling.calls import endpoint_for_account, insurer_operation_run, new_reference
from integrations.calling.engine import IssuanceHistory, Outcome
from integrations.operations import CANCEL_REASONS
from integrations.retry_policies import policy_for
from notifications.models import Notification
from notifications.services import agency_people, notify
from policies.models import Cancellation, Policy, PolicyFinding
from policies.selectors import policy_get
from policies.signals import policy_cancelled
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

CENT = Decimal("0.01")
# What a person reads while a cancellation's send may have taken effect.
UNKNOWN_OUTCOME_MESSAGE = "Sonuç bilinmiyor, sigorta şirketine aynı referansla yeniden soruluyor."
INLINE_RETRY_MAX_WAIT = 10.0
LEASE_MARGIN_SECONDS = 30.0
TASK_TIMEOUT_MARGIN_SECONDS = 10.0


class CancellationRefused(Conflict):
    """The platform will not cancel this policy now; the message is for the agent."""


# --- the refund, as the contract computes it -------------------------------------------------------


def cancellation_refund_estimate(*, policy: Policy, reason: str, effective_on: date) -> Decimal | None:
    """What the insurer will pay back (CONTRACTS.md, "Cancellation"), None when the platform
    does not know the premium or the period. Shown before the call; the insurer's own figure,
    once it answers, is the one that counts. Rounded half-up to the kuruş, once, here."""
    if policy.premium is None or policy.starts_on is None or policy.ends_on is None:
        return None
    if reason == "duplicate":
        return policy.premium.quantize(CENT, rounding=ROUND_HALF_UP)
    days = (policy.ends_on - policy.starts_on).days
    if days <= 0:
        return None
    left = max((policy.ends_on - effective_on).days, 0)
    return (policy.premium * left / days).quantize(CENT, rounding=ROUND_HALF_UP)


def _parse_date(value: Any) -> date | None:
    if isinstance(value, date):
        return value
    text = str(value or "").strip()
    for parse in (date.fromisoformat, lambda t: date(int(t[6:10]), int(t[3:5]), int(t[0:2]))):
        try:
            return parse(text)
        except (ValueError, IndexError):
            continue
    return None


def cancellation_input_check(*, policy: Policy, reason: Any, effective_on: Any) -> tuple[str, date]:
    """The agent's reason and date, checked: Invalid naming the field otherwise. A duplicate's
    cancellation always takes effect on the policy's start (full refund), whatever was typed."""
    errors: dict[str, str] = {}
    if reason not in CANCEL_REASONS:
        errors["reason"] = "Bir iptal nedeni seçin."
    when = _parse_date(effective_on)
    if when is None:
        errors["effective_on"] = "İptal tarihini GG.AA.YYYY biçiminde girin."
    elif reason == "duplicate" and policy.starts_on is not None:
        when = policy.starts_on
    elif policy.starts_on is not None and when < policy.starts_on:
        errors["effective_on"] = f"İptal tarihi poliçe başlangıcından ({policy.starts_on:%d.%m.%Y}) önce olamaz."
    elif policy.ends_on is not None and when > policy.ends_on:
        errors["effective_on"] = f"İptal tarihi poliçe bitişinden ({policy.ends_on:%d.%m.%Y}) sonra olamaz."
    if errors:
        raise Invalid(errors)
    assert when is not None
    return str(reason), when


# --- starting one ----------------------------------------------------------------------------------


def cancellation_start(*, user: User, policy_id: int, reason: str, effective_on: Any) -> Cancellation:
    """The agent confirmed: store the cancellation (or find the live one) and queue it.

    Only the policy's own agency cancels it (its account at the insurer is called), and a
    sub-agency user only their sub-agency's policy (`agencies.scope`). A second
    click, another tab or the API asking again gets the same record back.
    """
    agency = agency_of(user)
    if not agency.is_active:
        raise CancellationRefused("Acenteniz pasif durumda; poliçe iptal edilemez.")
    policy = policy_get(user=user, pk=policy_id)
    if not may_act_on(user, agency_id=policy.agency_id, sub_agency_id=policy.sub_agency_id):
        raise Policy.DoesNotExist
    live = Cancellation.objects.filter(policy=policy).exclude(state=WorkState.FAILED).first()
    if live is not None:
        return live
    if policy.status != Policy.Status.ACTIVE:
        raise CancellationRefused(f"Poliçe {policy.get_status_display().lower()}; iptal edilecek bir şey yok.")
    reason, when = cancellation_input_check(policy=policy, reason=reason, effective_on=effective_on)
    try:
        with transaction.atomic():
            cancellation = Cancellation.objects.create(
                policy=policy,
                agency=agency,
                requested_by=user,
                reference=new_reference("IC"),
                reason=reason,
                effective_on=when,
                refund_estimate=cancellation_refund_estimate(policy=policy, reason=reason, effective_on=when),
                payload={"policy_no": policy.policy_no, "reason": reason, "effective_on": when.isoformat()},
            )
            work_send(Cancellation, [cancellation.pk])
    except IntegrityError:
        live = Cancellation.objects.filter(policy=policy).exclude(state=WorkState.FAILED).first()
        if live is not None:
            return live
        raise
    return cancellation


# --- its tries --------------------------------------------------------------------------------------


def cancellation_process(cancellation_id: int) -> str:
    """Take the record through as many tries as are due now (short waits inline, inside the
    task's timeout); returns the state it was left in. Mirrors `issuance_process`."""
    cancellation = Cancellation.objects.select_related("policy__account__insurer").get(pk=cancellation_id)
    account = cancellation.policy.account
    policy = policy_for(account.insurer.code, "cancel_policy")
    lease = policy.deadline + LEASE_MARGIN_SECONDS
    task_ends = time.monotonic() + settings.Q_CLUSTER["timeout"] - TASK_TIMEOUT_MARGIN_SECONDS
    stopping = work_stop_event()
    while True:
        if not work_claim(Cancellation, cancellation_id, lease_seconds=lease):
            return Cancellation.objects.get(pk=cancellation_id).state
        cancellation.refresh_from_db()
        state = work_try(CANCELLATION_WORK, cancellation, insurer_code=account.insurer.code, policy=policy)
        if state in (WorkState.SUBMITTED, WorkState.FAILED, WorkState.DEFERRED):
            _notify(cancellation_id)
        if state != WorkState.PENDING or stopping.is_set():
            return state
        due = Cancellation.objects.values_list("next_attempt_at", flat=True).get(pk=cancellation_id)
        wait = max((due - timezone.now()).total_seconds(), 0.0) if due else 0.0
        if wait > INLINE_RETRY_MAX_WAIT or time.monotonic() + wait + policy.deadline > task_ends:
            return state
        if stopping.wait(wait + 0.01) or not work_promote_one(Cancellation, cancellation_id):
            return Cancellation.objects.get(pk=cancellation_id).state


def _cancellation_call(cancellation: Cancellation, permit: str) -> Outcome:
    endpoint = endpoint_for_account(cancellation.policy.account)

    def before_send() -> None:
        Cancellation.objects.filter(pk=cancellation.pk).update(maybe_sent=True, updated_at=Now())

    return insurer_operation_run(
        endpoint=endpoint,
        operation="cancel_policy",
        data=dict(cancellation.payload),
        product=cancellation.policy.product,
        reference=cancellation.reference,
        history=IssuanceHistory(maybe_sent=cancellation.maybe_sent, on_send=before_send),
        attempt_limit=1,
        attempt_offset=cancellation.attempts,
        budget_spent=permit == "spent",
    )


@transaction.atomic
def _cancellation_stored(cancellation: Cancellation, outcome: Outcome) -> None:
    """The insurer's refund and date, and the policy CANCELLED, in one transaction; whoever cares
    (the commission's reversal) hears it inside that transaction."""
    result = outcome.result_as(results.Cancellation)
    if not work_mark_submitted(cancellation, refund=result.refund, cancelled_on=result.cancelled_on):
        return
    Policy.objects.filter(pk=cancellation.policy_id).update(status=Policy.Status.CANCELLED)
    PolicyFinding.objects.filter(
        policy_id=cancellation.policy_id, kind=PolicyFinding.Kind.DUPLICATE, resolved_at__isnull=True
    ).update(resolved_at=timezone.now())  # a duplicate cancelled is healed
    stored = Cancellation.objects.select_related("policy").get(pk=cancellation.pk)
    policy_cancelled.send_robust(sender=Cancellation, cancellation=stored)


def _cancellation_note(cancellation: Cancellation, error: InsurerError, outcome: Outcome | None) -> str:
    maybe_sent = Cancellation.objects.values_list("maybe_sent", flat=True).get(pk=cancellation.pk)
    if maybe_sent and (outcome is None or outcome.outcome == "unknown" or error.ambiguous):
        return mask_and_cut(f"{UNKNOWN_OUTCOME_MESSAGE} ({error.provider_code}: {error.message})", 300)
    return error.message


CANCELLATION_WORK = WorkKind(
    model=Cancellation,
    call=_cancellation_call,
    on_success=_cancellation_stored,
    # A re-send under the same reference after a lost answer is the question, not a retry.
    looks_first=lambda cancellation: cancellation.maybe_sent,
    note=_cancellation_note,
)


def _notify(cancellation_id: int) -> None:
    """The agent who asked, and the agency's people, hear how it ended; a notification failing
    never costs the cancellation."""
    try:
        cancellation = Cancellation.objects.select_related("policy__insurer", "requested_by").get(pk=cancellation_id)
        notify_cancellation_outcome(cancellation)
    except Exception:
        logger.exception("cancellation %s: the outcome notification failed", cancellation_id)


def notify_cancellation_outcome(cancellation: Cancellation) -> list[Notification]:
    policy = cancellation.policy
    insurer = policy.insurer.name
    state = cancellation.state
    if state == WorkState.SUBMITTED:
        kind = Notification.Kind.CANCELLATION_DONE
        title = f"{insurer} poliçesi iptal edildi: {policy.policy_no}"
        body = f"İade primi {cancellation.refund} TL; iptal {cancellation.cancelled_on:%d.%m.%Y} itibarıyla geçerli."
    elif state == WorkState.FAILED:
        kind = Notification.Kind.CANCELLATION_REFUSED
        title = f"{insurer} poliçe iptalini reddetti: {policy.policy_no}"
        body = cancellation.error_message or "Şirket iptali reddetti."
    elif state == WorkState.DEFERRED:
        kind = Notification.Kind.CANCELLATION_WAITING
        title = f"{insurer} poliçe iptali sizi bekliyor: {policy.policy_no}"
        body = "İptalin sonucu bilinmiyor ya da şirket yanıt vermiyor; bir yetkili takip etmeli."
    else:
        return []
    recipients = {
        cancellation.requested_by,
        *agency_people(cancellation.agency_id, sub_agency_id=cancellation.policy.sub_agency_id),
    }
    return notify(
        recipients=list(recipients),
        agency_id=cancellation.agency_id,
        kind=kind,
        key=f"cancellation:{cancellation.pk}:{state}",
        title=title,
        body=body,
        link=reverse("cancellation_detail", args=[cancellation.pk]),
        references=(policy.policy_no,),
    )


# --- the pump and the registry ---------------------------------------------------------------------


def cancellation_work_register() -> None:
    """Cancellations as a kind of durable work (called from `PoliciesConfig.ready`). A replay
    needs no preparation: it always sends the same reference, and a record that may have been
    sent keeps `maybe_sent`, so the insurer is asked (by the repeat) before anything else."""
    work_kind_register(
        WorkRegistration(name="cancellation", model=Cancellation, task="policies.tasks.cancellation_process")
    )
