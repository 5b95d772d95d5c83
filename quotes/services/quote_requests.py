"""Asking every insurer for a quote at once, and keeping each answer as it lands."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from datetime import date, timedelta
from typing import Any

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from agencies.models import Agency
from agencies.scope import agency_of, may_act_on, sub_agency_of
from customers.models import Customer
from customers.services import customer_identity_conflict
from insurehub import change_feed
from insurehub.errors import Invalid, NoActiveAgency
from insurehub.masking import mask_and_cut
from integrations.answers.results import Address, Quote
from integrations.answers.taxonomy import ErrorClass, ErrorKind, InsurerError, plain_message
from integrations.attempts.recording import DatabaseRecorder
from integrations.calling.calls import endpoint_for_account, insurer_operation_run
from integrations.calling.engine import Outcome
from integrations.models import InsurerAccount
from integrations.operations import QUOTE_OPERATION, Operation, Product
from integrations.retry_policies import policy_for
from quotes.live import RESULTS_TOPIC
from quotes.models import InsurerQuote, QuoteRequest
from quotes.validation import validate_fields
from vehicles.selectors import vehicle_code_errors
from work.services import broker_queue_is_empty

logger = logging.getLogger(__name__)

# Time given beyond the slowest policy deadline for the last answer to be written.
DEADLINE_GRACE = timedelta(seconds=2)


class InputInvalid(Invalid):
    """The agent's input has errors; nothing was saved. `errors` maps field -> Turkish message."""


class NoInsurerAvailable(Invalid):
    """The agency has no active account at any active insurer selling this product: a bad
    `product` for this agency, answered on that field."""

    def __init__(self, message: str) -> None:
        super().__init__({"product": message}, message)


def accounts_selling(*, agency: Agency, product: str) -> list[InsurerAccount]:
    """The agency's active accounts at active insurers that sell `product`: who is asked.
    None is `NoInsurerAvailable` (a bad product for this agency)."""
    accounts = [
        account
        for account in InsurerAccount.objects.select_related("insurer").filter(
            agency=agency, is_active=True, insurer__is_active=True
        )
        if account.insurer.sells(product)
    ]
    if not accounts:
        raise NoInsurerAvailable("Bu ürün için tanımlı aktif sigorta şirketi hesabı yok.")
    return accounts


def operations_for(product: str) -> list[Operation]:
    """DASK asks for the address check first, then the quote: two calls, two policies."""
    if product == Product.DASK:
        return [Operation.DASK_ADDRESS, Operation.DASK_QUOTE]
    return [QUOTE_OPERATION[Product(product)]]


def _request_deadline(product: str, insurer_codes: list[str]) -> timedelta:
    seconds = max(
        (sum(policy_for(code, op.value).deadline for op in operations_for(product)) for code in insurer_codes),
        default=10.0,
    )
    return timedelta(seconds=seconds) + DEADLINE_GRACE


def quote_input_validate(*, product: str, data: Mapping[str, Any]) -> tuple[dict, dict[str, str]]:
    """`validate_fields`, then what only the database knows: a kasko's brand, type and model
    year against the current TSB value list (an insurer refuses a code it does not know, after
    a slow round trip). The one check of a request's input: the desk's form and this service's
    callers (the API, renewals) all come through here. Same shape as `validate_fields`."""
    clean, errors = validate_fields(product, data)
    if product == Product.KASKO:
        vehicle_errors = vehicle_code_errors(
            brand_code=clean.get("brand_code"), model_code=clean.get("model_code"), model_year=clean.get("model_year")
        )
        errors.update(vehicle_errors)
    return clean, errors


def quote_request_create(
    *, user: User, product: str, data: Mapping[str, Any], customer: Customer | None = None
) -> QuoteRequest:
    """Validate, then store the request with one row per insurer; the calls start after commit.

    For a `customer` (of the user's scope: their agency, or their sub-agency's customers for a
    sub-agency user), a blank owner_id is the customer's number, and any other number is refused:
    the request is stored under the customer it was priced for.

    The request is credited to the user's sub-agency; the agency's own staff quoting for a
    sub-agency's customer credit that sub-agency (its customer, its portfolio), and otherwise no
    one (docs/agencies.md).
    """
    if product not in {p.value for p in Product}:
        raise InputInvalid({"product": "Geçersiz ürün."})
    agency = agency_of(user)
    if not agency.is_active:
        # Its insurer accounts are the agency's contracts: a deactivated agency asks nobody.
        raise NoActiveAgency("Acenteniz pasif durumda; teklif alınamaz.")
    if customer is not None:
        if not may_act_on(user, agency_id=customer.agency_id, sub_agency_id=customer.sub_agency_id):
            raise InputInvalid({"customer": "Geçersiz müşteri seçimi."})
        if not str(data.get("owner_id") or "").strip():
            data = {**data, "owner_id": customer.identity_no}
    clean, errors = quote_input_validate(product=product, data=data)
    if customer is not None and "owner_id" in clean:
        conflict = customer_identity_conflict(customer=customer, owner_id=clean["owner_id"])
        if conflict:
            errors["owner_id"] = conflict
    if errors:
        raise InputInvalid(errors)
    accounts = accounts_selling(agency=agency, product=product)
    now = timezone.now()
    with transaction.atomic():
        request = QuoteRequest.objects.create(
            agency=agency,
            sub_agency_id=_credited_sub_agency_id(user, customer),
            customer=customer,
            created_by=user,
            product=product,
            input_data=clean,
            plate=clean.get("plate", ""),
            owner_id=clean["owner_id"],
            starts_on=date.fromisoformat(clean["starts_on"]),
            deadline_at=now + _request_deadline(product, [a.insurer.code for a in accounts]),
        )
        InsurerQuote.objects.bulk_create(
            InsurerQuote(
                request=request,
                insurer=account.insurer,
                account=account,
                max_attempts=policy_for(account.insurer.code, operations_for(product)[-1].value).max_attempts,
            )
            for account in accounts
        )
        transaction.on_commit(lambda: _enqueue_dispatch(request.pk), robust=True)
    return request


def _credited_sub_agency_id(user: User, customer: Customer | None) -> int | None:
    """The sub-agency a new request is credited to: the user's, else the customer's."""
    own = sub_agency_of(user)
    if own is not None:
        return own.pk
    return customer.sub_agency_id if customer is not None else None


def _enqueue_dispatch(request_id: int) -> None:
    from django_q.tasks import async_task

    # The request's rows hold the outcome: django-q2 need not store a success per quote request
    # (one more write on the database at the agent's moment of waiting); a crash it still keeps.
    async_task("quotes.tasks.quote_request_dispatch", request_id, task_name=f"quote-request-{request_id}", save=False)


# A dispatch task starts within tens of milliseconds of the ask; a request whose rows are all
# still QUEUED this long after it, with the broker's queue empty, lost its task (Redis restarting
# between the ask and the pull, or refusing the task at the ask): sent again while the agent waits.
DISPATCH_LOST_SECONDS = 3.0


def quote_requests_redispatch_lost(*, older_than: float = DISPATCH_LOST_SECONDS, limit: int = 100) -> list[int]:
    """Send the dispatch again for requests whose task was lost; returns their ids (the work pump).

    Only while the broker's queue is empty (a backlog is not a loss) and before the request's
    deadline (after it, rendering closes the rows as unanswered). A dispatch sent twice is
    harmless: one UPDATE claims the rows, the second finds none left.
    """
    if not broker_queue_is_empty():
        return []
    now = timezone.now()
    ids = list(
        QuoteRequest.objects.filter(
            created_at__lt=now - timedelta(seconds=older_than),
            deadline_at__gt=now,
            insurer_quotes__state=InsurerQuote.State.QUEUED,
        )
        .exclude(insurer_quotes__state__in=[s for s in InsurerQuote.State if s != InsurerQuote.State.QUEUED])
        .order_by("pk")
        .values_list("pk", flat=True)
        .distinct()[:limit]
    )
    for request_id in ids:
        logger.warning("quote request %s: its dispatch task was lost; sent again", request_id)
        _enqueue_dispatch(request_id)
    return ids


def quote_request_dispatch(request_id: int) -> int:
    """Claim every insurer's row at once and hand the calls to the I/O pool; returns at once (the
    worker is not blocked).

    One UPDATE claims the request's queued rows for this dispatch (a second dispatch of the same
    request finds none left), instead of one write per insurer in the pool threads between the
    agent's ask and each call; the rows, read once here, go to the pool threads as they are.
    """
    from quotes import fanout

    rows = list(
        InsurerQuote.objects.select_related("request", "account__insurer").filter(
            request_id=request_id, state=InsurerQuote.State.QUEUED
        )
    )
    if not rows:
        return 0
    now = timezone.now()
    claimed = InsurerQuote.objects.filter(id__in=[row.id for row in rows], state=InsurerQuote.State.QUEUED).update(
        state=InsurerQuote.State.RUNNING, attempt=1, started_at=now
    )
    if claimed != len(rows):
        # Some row moved meanwhile (a second dispatch, the deadline): ours are those claimed at `now`.
        ours = set(
            InsurerQuote.objects.filter(
                id__in=[row.id for row in rows], state=InsurerQuote.State.RUNNING, started_at=now
            ).values_list("id", flat=True)
        )
        rows = [row for row in rows if row.id in ours]
    rows_changed(request_id)
    for row in rows:
        row.state, row.attempt, row.started_at = InsurerQuote.State.RUNNING, 1, now
        fanout.submit(_fetch_claimed, row)
    return len(rows)


def attempt_reference(request_id: int) -> str:
    """The reference on the attempt log of every insurer call made for one quote request, so
    on-call can pull up what each insurer said for it (admin: search the attempts for "Q-<id>")."""
    return f"Q-{request_id}"


def _claim(insurer_quote_id: int, *, request_id: int, max_attempts: int) -> bool:
    """QUEUED -> RUNNING for exactly one caller, even if the dispatch ran twice; one write, since
    it sits between the agent's ask and the insurer call."""
    claimed = InsurerQuote.objects.filter(id=insurer_quote_id, state=InsurerQuote.State.QUEUED).update(
        state=InsurerQuote.State.RUNNING, attempt=1, max_attempts=max_attempts, started_at=timezone.now()
    )
    if claimed:
        rows_changed(request_id)
    return bool(claimed)


def insurer_quote_fetch(insurer_quote_id: int) -> None:
    """Ask one insurer (address check first for DASK) and store what it said."""
    row = InsurerQuote.objects.select_related("request", "account__insurer").get(id=insurer_quote_id)
    operations = operations_for(row.request.product)
    first_cap = policy_for(row.account.insurer.code, operations[0].value).max_attempts
    if not _claim(row.id, request_id=row.request_id, max_attempts=first_cap):
        return
    _ask(row)


def _fetch_claimed(row: InsurerQuote) -> None:
    """The call for a row `quote_request_dispatch` claimed (RUNNING, attempt 1, loaded with its
    request and account)."""
    operations = operations_for(row.request.product)
    first_cap = policy_for(row.account.insurer.code, operations[0].value).max_attempts
    if row.max_attempts != first_cap:  # DASK's address check, or a policy changed since the request
        InsurerQuote.objects.filter(id=row.id).update(max_attempts=first_cap)
    _ask(row)


class _AnswerRecorder(DatabaseRecorder):
    """The attempt log of one quote call, its last rows written with the answer.

    Attempts flushed before a retry's wait (the engine notes the wait on them first) are written
    at once, as every caller's are. The call's last attempts — the answer's — wait for `write`,
    which `_store_outcome` runs in the transaction that stores the answer: one write transaction
    (one commit, an fsync on PostgreSQL) between the insurer's answer and the agent seeing it,
    instead of two. Nothing is dropped: every path to the end of a call stores its outcome.
    """

    def flush(self) -> None:
        batch = self.pending()
        if batch and batch[-1].wait_reason:
            super().flush()

    def write(self) -> None:
        super().flush()


def _ask(row: InsurerQuote) -> None:
    endpoint = endpoint_for_account(row.account)
    operations = operations_for(row.request.product)
    attempt_caps = [policy_for(endpoint.insurer_code, operation.value).max_attempts for operation in operations]
    data = dict(row.request.input_data)
    # Shown beside the DASK quote, so the agent confirms the UAVT code is the customer's building.
    confirmed: dict[str, str] = {}
    outcome: Outcome | None = None
    failed_at: Operation | None = None
    recorder = _AnswerRecorder()
    try:
        for index, (operation, max_attempts) in enumerate(zip(operations, attempt_caps, strict=True)):
            if index:  # the next call of the product (DASK's quote after its address check)
                with transaction.atomic():
                    recorder.write()
                    InsurerQuote.objects.filter(id=row.id).update(attempt=1, max_attempts=max_attempts)
                    rows_changed(row.request_id)

            def on_retry(attempt_no: int, error: InsurerError, wait: float, *, _max: int = max_attempts) -> None:
                InsurerQuote.objects.filter(
                    id=row.id, state__in=[InsurerQuote.State.RUNNING, InsurerQuote.State.RETRYING]
                ).update(state=InsurerQuote.State.RETRYING, attempt=attempt_no, max_attempts=max(_max, attempt_no))
                rows_changed(row.request_id)

            outcome = insurer_operation_run(
                endpoint=endpoint,
                operation=operation.value,
                data=data,
                product=row.request.product,
                reference=attempt_reference(row.request_id),
                on_retry=on_retry,
                recorder=recorder,
            )
            if not outcome.ok:
                failed_at = operation
                break
            if operation is Operation.DASK_ADDRESS:
                address = outcome.result_as(Address)
                data["building_id"] = address.building_id
                confirmed["address"] = address.address
    except BaseException:
        recorder.write()  # a call that crashed keeps its attempts' rows all the same
        raise
    assert outcome is not None
    with transaction.atomic():
        recorder.write()
        _store_outcome(row, outcome, extra_details=confirmed, failed_at=failed_at)


QUOTE_CURRENCY = "TRY"
NOT_TRY_MESSAGE = "Şirket teklifi TL dışında bir para biriminde ({currency}) verdi; TL tekliflerle karşılaştırılamaz."


# A DASK address check's "not found" is about the UAVT code, whatever the insurer's generic words.
ADDRESS_NOT_FOUND_MESSAGE = "Bu UAVT adres kodu şirketin adres kayıtlarında yok. Kodu kontrol edin."


def _store_outcome(
    row: InsurerQuote,
    outcome: Outcome,
    *,
    extra_details: dict[str, str] | None = None,
    failed_at: Operation | None = None,
) -> None:
    now = timezone.now()
    # The answer reaches the agent's open stream the moment its transaction commits.
    rows_changed(row.request_id)
    live = InsurerQuote.objects.filter(id=row.id).exclude(state__in=InsurerQuote.FINAL_STATES)
    if outcome.ok and outcome.result_as(Quote).currency != QUOTE_CURRENCY:
        # CONTRACTS.md: money is TRY. A premium in another currency would be compared, sorted and
        # sold as lira: the row is refused, what the insurer said kept for support.
        quote = outcome.result_as(Quote)
        live.update(
            state=InsurerQuote.State.FAILED,
            error_class=ErrorClass.PERMANENT.value,
            error_kind=ErrorKind.BUSINESS_REJECT.value,
            provider_code="CURRENCY_NOT_TRY",
            message=mask_and_cut(NOT_TRY_MESSAGE.format(currency=quote.currency), 300),
            provider_message=mask_and_cut(
                f"{quote.quote_no}: {quote.premium} {quote.currency}", 300, keep=(quote.quote_no,)
            ),
            finished_at=now,
        )
        return
    if outcome.ok:
        quote = outcome.result_as(Quote)
        live.update(
            state=InsurerQuote.State.SUCCEEDED,
            quote_no=quote.quote_no,
            premium=quote.premium,
            currency=quote.currency,
            valid_until=quote.valid_until,
            details={**quote.details, **(extra_details or {})},
            finished_at=now,
        )
        return
    error = outcome.error
    assert error is not None
    no_answer = error.error_class is not ErrorClass.PERMANENT
    if no_answer:
        message = _no_answer_message(error)
    elif failed_at is Operation.DASK_ADDRESS and (
        error.kind is ErrorKind.NOT_FOUND or (error.kind is ErrorKind.VALIDATION and error.field == "uavt_code")
    ):
        message = ADDRESS_NOT_FOUND_MESSAGE
    else:
        message = plain_message(error)
    live.update(
        state=InsurerQuote.State.NO_ANSWER if no_answer else InsurerQuote.State.FAILED,
        error_class=error.error_class.value,
        error_kind=error.kind.value,
        provider_code=mask_and_cut(error.provider_code, 64),
        message=mask_and_cut(message, 300),
        provider_message=mask_and_cut(error.message, 300),
        finished_at=now,
    )


def _no_answer_message(error: InsurerError) -> str:
    if error.is_local_refusal:
        # Nothing was sent: the agent may ask again shortly, and should know no call went out.
        return plain_message(error)
    if error.kind in (ErrorKind.THROTTLED, ErrorKind.UNAVAILABLE):
        return "Yanıt alınamadı: şirket yoğun."
    if error.error_class is ErrorClass.UNKNOWN:
        return f"Yanıt alınamadı: {plain_message(error)}"
    return "Yanıt alınamadı."


def quote_request_close_overdue(*, request: QuoteRequest) -> int:
    """Past the request's deadline, unanswered insurers are closed as "Yanıt alınamadı"."""
    if timezone.now() < request.deadline_at:
        return 0
    closed = (
        InsurerQuote.objects.filter(request=request)
        .exclude(state__in=InsurerQuote.FINAL_STATES)
        .update(
            state=InsurerQuote.State.NO_ANSWER,
            error_class=ErrorClass.RETRYABLE.value,
            error_kind=ErrorKind.TIMEOUT.value,
            message="Yanıt alınamadı.",
            finished_at=timezone.now(),
        )
    )
    if closed:
        rows_changed(request.pk)
    return closed


def rows_changed(request_id: int) -> None:
    """A request's insurer rows moved: its open results streams wake once this commits
    (`insurehub.change_feed`; on the embedded default the watcher finds it by itself)."""
    change_feed.publish(RESULTS_TOPIC, request_id)
