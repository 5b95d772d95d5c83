"""The two baselines, as most hand-written insurer clients do it.

* naive: one call; success or failure. A throttle is a failure, for good; nothing is retried.
* plain tenacity: `wait_exponential(multiplier=1, min=1, max=10)` (1, 2, 4, 8 s: no jitter, the
  insurer's own wait signal ignored) and `stop_after_attempt(5)`, retrying every non-success
  (bad records and throttles alike) — the example in tenacity's README, as most code copies it.

No Django here (the fan-out scenario runs these in a process of their own).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from tenacity import RetryCallState, Retrying, retry_if_result, stop_after_attempt, wait_exponential

from bench.wire import Answer

NAIVE = "naive"
TENACITY = "tenacity"
PLATFORM = "platform"
BASELINES = (NAIVE, TENACITY)


@dataclass
class Result:
    ok: bool
    attempts: int
    last: Answer
    finished: float = 0.0  # time.monotonic() when the client was done with the item


def naive_run(call: Callable[[], Answer]) -> Result:
    answer = call()
    return Result(ok=answer.ok, attempts=1, last=answer, finished=time.monotonic())


def _last_answer(state: RetryCallState) -> Answer:
    """The answer of the last attempt, returned rather than raised when the attempts run out."""
    assert state.outcome is not None  # tenacity calls this only after an attempt has ended
    return state.outcome.result()


def tenacity_retrying(sleep: Callable[[float], None] = time.sleep) -> Retrying:
    return Retrying(
        wait=wait_exponential(multiplier=1, min=1, max=10),
        stop=stop_after_attempt(5),
        retry=retry_if_result(lambda answer: not answer.ok),
        retry_error_callback=_last_answer,
        sleep=sleep,
    )


def tenacity_run(call: Callable[[], Answer]) -> Result:
    attempts = 0

    def once() -> Answer:
        nonlocal attempts
        attempts += 1
        return call()

    answer = tenacity_retrying()(once)
    return Result(ok=answer.ok, attempts=attempts, last=answer, finished=time.monotonic())


RUNNERS: dict[str, Callable[[Callable[[], Answer]], Result]] = {NAIVE: naive_run, TENACITY: tenacity_run}
