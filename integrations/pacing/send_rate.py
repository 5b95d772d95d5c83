"""The engine's send-rate hook, backed by the shared state.

See `integrations.pacing.arithmetic` for the rules and `integrations.pacing.shared_state` for
where the state lives. One `SharedSendRate` is made per operation, because the ceiling is the
calling agency's own contracted rate at that insurer.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from insurehub.dbpool import sleep_released
from integrations.answers.taxonomy import (
    LOCAL_RATE_LIMIT,
    LOCAL_RATE_LIMIT_MESSAGE_TR,
    PACING_UNAVAILABLE,
    ErrorKind,
    InsurerError,
    WaitHint,
)
from integrations.pacing.arithmetic import RateState, Window, adjusted_rate, rate_ceiling
from integrations.pacing.shared_state import SharedState, shared_state
from integrations.retry_policies import RetryPolicy

logger = logging.getLogger(__name__)


def local_rate_limit(wait: float) -> InsurerError:
    """A call refused on our side: its send slot is `wait` seconds away, beyond its deadline.

    THROTTLED, so every layer treats it as a wait and never as a failure; not ambiguous
    (nothing was sent); its wait hint is the slot's, so a durable record comes back then.
    """
    return InsurerError(
        ErrorKind.THROTTLED,
        provider_code=LOCAL_RATE_LIMIT,
        message=LOCAL_RATE_LIMIT_MESSAGE_TR,
        wait=WaitHint(round(wait, 3), "local-send-rate"),
        ambiguous=False,
    )


# How long a call refused for an unreachable send-rate state waits before it is tried again.
PACING_UNAVAILABLE_WAIT_SECONDS = 1.0


def pacing_unavailable(exc: BaseException) -> InsurerError:
    """The shared state that hands out send slots did not answer: the call is not sent.

    A wait like a local throttle (nothing sent, not the insurer's fault, no retry budget), so a
    durable record comes back in a second rather than burning its tries as a crash of ours.
    """
    return InsurerError(
        ErrorKind.THROTTLED,
        provider_code=PACING_UNAVAILABLE,
        message=f"Gönderim hızı durumu okunamadı; istek gönderilmedi ({type(exc).__name__}).",
        wait=WaitHint(PACING_UNAVAILABLE_WAIT_SECONDS, "pacing-state"),
        ambiguous=False,
    )


def insurer_of(account_key: str) -> str:
    """The insurer in an account's rate key (`InsurerAccount.rate_key`: "<insurer>:<agency>")."""
    return account_key.partition(":")[0]


class SharedSendRate:
    def __init__(
        self,
        *,
        contracted_rate: float | None,
        state: SharedState | None = None,
        sleep: Callable[[float], None] = sleep_released,
    ) -> None:
        self.contracted_rate = contracted_rate
        self.state = state or shared_state()
        self.sleep = sleep

    def _ceiling(self, policy: RetryPolicy) -> float:
        return rate_ceiling(policy_ceiling=policy.rate_ceiling, contracted_rate=self.contracted_rate)

    def acquire(self, account_key: str, *, policy: RetryPolicy, max_wait: float | None, count: bool = False) -> float:
        """Wait for this account's next send slot; returns the wait.

        A slot later than `max_wait` (the call's deadline) is not taken — the shared state leaves
        it for a caller who can wait that long — and the call is not sent: sending it anyway
        would put a burst beyond the contract on the insurer, which may suspend an agency that
        keeps breaking its limit. Raises `local_rate_limit(wait)` then.

        `count`: the slot taken also counts the attempt in the send rate's window, in the same
        step (the caller then reports only a throttle: `observe(..., counted=True)`).
        """
        ceiling = self._ceiling(policy)
        if count:
            wait, closed = self.state.reserve_counted(
                account_key, initial_rate=ceiling, ceiling=ceiling, max_wait=max_wait, burst=policy.rate_burst
            )
            if closed is not None:
                self._adjust(account_key, closed, policy)
        else:
            wait = self.state.reserve_send_slot(
                account_key, initial_rate=ceiling, ceiling=ceiling, max_wait=max_wait, burst=policy.rate_burst
            )
        if max_wait is not None and wait > max_wait:
            self._count_refusal(account_key)
            raise local_rate_limit(wait)
        if wait > 0:
            self.sleep(wait)
        return wait

    def _count_refusal(self, account_key: str) -> None:
        # Bookkeeping only: the call is refused whether or not the count is written.
        try:
            self.state.count_local_refusal(insurer_of(account_key))
        except Exception as exc:  # noqa: BLE001 - the state may be the part that is down
            logger.warning("account=%s: a local refusal was not counted: %r", account_key, exc)

    def observe(self, account_key: str, *, throttled: bool, policy: RetryPolicy, counted: bool = False) -> None:
        """The insurer's answer to a call; `counted`: its attempt was counted with its slot, so
        only a throttle is left to write (a success costs no statement)."""
        if counted and not throttled:
            return
        closed = self.state.record_outcome(account_key, throttled=throttled, counted=counted)
        if closed is not None:
            self._adjust(account_key, closed, policy)

    def _adjust(self, account_key: str, closed: tuple[RateState, Window], policy: RetryPolicy) -> None:
        current, window = closed
        adjusted = adjusted_rate(
            current,
            window,
            floor=policy.rate_floor,
            ceiling=self._ceiling(policy),
            threshold=policy.throttle_threshold,
        )
        if adjusted != current:
            self.state.set_rate(account_key, adjusted)
