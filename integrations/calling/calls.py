"""Running one insurer operation: the entry point every caller uses (probe, quote desk, jobs)."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from insurehub.dbpool import sleep_released
from integrations.adapters.registry import adapter_class
from integrations.answers.taxonomy import InsurerError
from integrations.attempts.recording import AttemptRecorder, DatabaseRecorder
from integrations.calling.channel import CallContext, Channel
from integrations.calling.engine import IssuanceHistory, Outcome, RetryBudget, SendRate, Tries, run_operation
from integrations.models import Insurer, InsurerAccount
from integrations.operations import OPERATION_PRODUCT, Operation
from integrations.pacing.retry_budget import SharedRetryBudget
from integrations.pacing.send_rate import SharedSendRate
from integrations.retry_policies import policy_for


@dataclass(frozen=True, repr=False)
class Endpoint:
    """Where and as whom to call: an insurer's address and one agency's credentials there.

    Its repr (and str) name the credentials' fields, never their values, and drop any user
    and password written into the address: an Endpoint ends up in tracebacks, debug logs and
    django-q task arguments, all of which people read.
    """

    insurer_code: str
    base_url: str
    credentials: Mapping[str, str]
    account_key: str = ""
    # The agency's contracted calls per second at this insurer: the send-rate ceiling.
    contracted_rate: float | None = None

    def __repr__(self) -> str:
        parts = urlsplit(self.base_url)
        address = urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2]))
        return (
            f"Endpoint(insurer_code={self.insurer_code!r}, base_url={address!r}, "
            f"credentials=<{', '.join(sorted(map(str, self.credentials)))}: hidden>, "
            f"account_key={self.account_key!r}, contracted_rate={self.contracted_rate!r})"
        )

    __str__ = __repr__


def endpoint_for_account(account: InsurerAccount) -> Endpoint:
    return Endpoint(
        insurer_code=account.insurer.code,
        base_url=account.insurer.base_url,
        credentials=account.get_credentials(),
        account_key=account.rate_key,
        contracted_rate=account.contracted_rate,
    )


def endpoint_resolve(
    *,
    insurer_code: str,
    base_url: str | None = None,
    credentials: Mapping[str, str] | None = None,
    agency_code: str | None = None,
) -> Endpoint:
    """Explicit address and credentials win; otherwise the stored account (one agency's)."""
    adapter_class(insurer_code)  # unknown insurer: fail before touching the database
    account = None
    if base_url is None or credentials is None:
        accounts = InsurerAccount.objects.select_related("insurer", "agency").filter(
            insurer__code=insurer_code, is_active=True
        )
        if agency_code:
            accounts = accounts.filter(agency__code=agency_code)
        found = list(accounts[:2])
        if not found:
            raise LookupError(
                f"no active account at {insurer_code!r}" + (f" for agency {agency_code!r}" if agency_code else "")
            )
        if len(found) > 1 and not agency_code:
            raise LookupError(f"several agencies have accounts at {insurer_code!r}: pick one with --agency")
        account = found[0]
    if base_url is None:
        base_url = account.insurer.base_url if account else Insurer.objects.get(code=insurer_code).base_url
    if credentials is None:
        assert account is not None  # looked up above whenever no credentials were given
        credentials = account.get_credentials()
    return Endpoint(
        insurer_code=insurer_code,
        base_url=base_url,
        credentials=credentials,
        account_key=account.rate_key
        if account
        else f"{insurer_code}:{_credential_identity(insurer_code, credentials or {})}",
        contracted_rate=account.contracted_rate if account else None,
    )


def _credential_identity(insurer_code: str, credentials: Mapping[str, str]) -> str:
    """A non-secret name for a set of credentials, to key rate state by: the adapter's first
    credential field (its last four characters if that field is the secret)."""
    try:
        adapter = adapter_class(insurer_code)
    except LookupError:
        return "adhoc"
    field = adapter.credential_fields[0] if adapter.credential_fields else ""
    value = str(credentials.get(field) or "")
    if not value:
        return "adhoc"
    return f"key-{value[-4:]}" if adapter.identifying_credential_is_secret else value


def new_reference(prefix: str = "IH") -> str:
    return f"{prefix}-{uuid.uuid4().hex[:20].upper()}"


def insurer_operation_run(
    *,
    endpoint: Endpoint,
    operation: str,
    data: Mapping[str, Any],
    product: str = "",
    reference: str = "",
    history: IssuanceHistory | None = None,
    recorder: AttemptRecorder | None = None,
    budget: RetryBudget | None = None,
    send_rate: SendRate | None = None,
    on_retry: Callable[[int, InsurerError, float], None] | None = None,
    sleep: Callable[[float], None] | None = None,
    attempt_limit: int | None = None,
    attempt_offset: int = 0,
    budget_spent: bool = False,
) -> Outcome:
    """Run one operation with the policy in force for (insurer, operation); never raises for insurer failures.

    Send rate and retry budget default to the shared ones, so every caller — quote desk,
    background jobs, the probe — paces and budgets against the same state.
    """
    op = Operation(operation)
    product = product or (OPERATION_PRODUCT[op] or "") or str(data.get("product") or "")
    recorder = recorder or DatabaseRecorder()
    cls = adapter_class(endpoint.insurer_code)
    context = CallContext(
        insurer_code=endpoint.insurer_code,
        operation=op.value,
        product=product,
        account_key=endpoint.account_key,
        reference=reference,
    )
    channel = Channel(base_url=endpoint.base_url, context=context, recorder=recorder, error_table=cls.error_table)
    adapter = cls(channel=channel, credentials=endpoint.credentials)
    tries = Tries(
        policy=policy_for(endpoint.insurer_code, op.value),
        recorder=recorder,
        budget=budget or SharedRetryBudget(),
        send_rate=send_rate or SharedSendRate(contracted_rate=endpoint.contracted_rate),
        on_retry=on_retry,
        attempt_limit=attempt_limit,
        attempt_offset=attempt_offset,
        budget_spent=budget_spent,
        sleep=sleep or sleep_released,
    )
    return run_operation(
        adapter=adapter, operation=op.value, data=data, tries=tries, reference=reference, history=history
    )
