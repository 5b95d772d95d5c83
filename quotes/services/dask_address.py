"""DASK's address step: the UAVT code shown as the address the insurers hold for it, before pricing.

A DASK policy insures a building, and the UAVT code is the only thing that says which one. A
code off by one digit is another flat's building: priced, sold and useless at the first claim.
So the agent sees the address the insurers resolve the code to and confirms it with the
customer before any quote is asked; a code no insurer knows is an error on the UAVT field, not
three rows of "record not found" after the wait.

Every agency account selling DASK is asked at once (threads: each call is a short I/O wait under
the address check's own retry policy, 8 s at most), through the same calling path as every
other insurer call (its pacing, budget and attempt log). The quote asks the address again at
each insurer, since the building id it needs is each insurer's own; this step only shows it.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from django.contrib.auth.models import User
from django.db import close_old_connections, connection, connections

from agencies.scope import agency_of
from integrations.answers.results import Address
from integrations.answers.taxonomy import ErrorClass, ErrorKind, plain_message
from integrations.calling.calls import endpoint_for_account, insurer_operation_run
from integrations.models import InsurerAccount
from integrations.operations import Operation, Product
from quotes.services.quote_requests import InputInvalid, accounts_selling
from quotes.validation import FieldError, validate_uavt_code

NO_SUCH_ADDRESS_MESSAGE = "Bu UAVT adres koduyla kayıtlı bir bina bulunamadı. Kodu kontrol edin."
ADDRESS_UNKNOWN_HERE_MESSAGE = "Şirketin adres kayıtlarında bu UAVT kodu yok."
# The reference on the attempt log of an address step (admin: search the attempts for it).
ATTEMPT_REFERENCE_PREFIX = "DASK-ADRES-"


@dataclass(frozen=True)
class InsurerAddress:
    """One insurer's answer: the address it holds for the code, or why it gave none."""

    insurer_name: str
    address: str = ""
    message: str = ""
    not_found: bool = False


@dataclass(frozen=True)
class AddressCheck:
    uavt_code: str
    answers: list[InsurerAddress] = field(default_factory=list)

    @property
    def addresses(self) -> list[tuple[str, list[str]]]:
        """Each distinct address (as written, spaces folded) and the insurers that gave it."""
        seen: dict[str, list[str]] = {}
        for answer in self.answers:
            if answer.address:
                seen.setdefault(" ".join(answer.address.split()), []).append(answer.insurer_name)
        return list(seen.items())

    @property
    def found(self) -> bool:
        return bool(self.addresses)

    @property
    def unanswered(self) -> list[InsurerAddress]:
        """Insurers that did not resolve the code: not known there, or no answer in time."""
        return [answer for answer in self.answers if not answer.address]


def dask_address_check(*, user: User, uavt_code: object) -> AddressCheck:
    """The address each of the agency's DASK insurers holds for `uavt_code`.

    Raises `InputInvalid` on `uavt_code` for a malformed code, or when every insurer answered
    that it does not know it; when none could be asked in time, the check returns with no
    address and the desk says so (the quote may still go: each insurer checks again).
    """
    try:
        code = validate_uavt_code(uavt_code)
    except FieldError as invalid:
        raise InputInvalid({invalid.field: invalid.message}) from invalid
    agency = agency_of(user)
    accounts = accounts_selling(agency=agency, product=Product.DASK.value)
    reference = f"{ATTEMPT_REFERENCE_PREFIX}{code}"
    if connection.in_atomic_block:
        # Threads would not see what the caller's open transaction wrote, and on SQLite would
        # queue behind its write lock: inside one, the insurers are asked one after another.
        answers = [_ask(account, code, reference, own_connection=False) for account in accounts]
    else:
        with ThreadPoolExecutor(max_workers=len(accounts), thread_name_prefix="dask-address") as pool:
            answers = list(pool.map(lambda account: _ask(account, code, reference), accounts))
    check = AddressCheck(uavt_code=code, answers=sorted(answers, key=lambda a: a.insurer_name))
    if not check.found and answers and all(answer.not_found for answer in answers):
        raise InputInvalid({"uavt_code": NO_SUCH_ADDRESS_MESSAGE})
    return check


def _ask(account: InsurerAccount, uavt_code: str, reference: str, *, own_connection: bool = True) -> InsurerAddress:
    """One insurer's address call; in a pool thread (`own_connection`) on a database connection
    of its own, closed after."""
    if own_connection:
        close_old_connections()
    try:
        outcome = insurer_operation_run(
            endpoint=endpoint_for_account(account),
            operation=Operation.DASK_ADDRESS.value,
            data={"uavt_code": uavt_code},
            product=Product.DASK.value,
            reference=reference,
        )
    finally:
        if own_connection:
            connections.close_all()
    name = account.insurer.name
    if outcome.ok:
        return InsurerAddress(insurer_name=name, address=outcome.result_as(Address).address)
    error = outcome.error
    assert error is not None
    # Some insurers say "no such code" as a refusal of the uavt_code field (Çınar's VAL_UAVT_KODU).
    refuses_the_code = error.kind is ErrorKind.NOT_FOUND or (
        error.kind is ErrorKind.VALIDATION and error.field == "uavt_code"
    )
    if refuses_the_code and error.error_class is ErrorClass.PERMANENT:
        return InsurerAddress(insurer_name=name, message=ADDRESS_UNKNOWN_HERE_MESSAGE, not_found=True)
    if error.error_class is ErrorClass.PERMANENT:
        return InsurerAddress(insurer_name=name, message=plain_message(error))
    return InsurerAddress(insurer_name=name, message="Yanıt alınamadı; teklif sırasında yeniden sorulacak.")
