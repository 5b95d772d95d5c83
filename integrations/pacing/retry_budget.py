"""The engine's retry-budget hook, backed by the shared state: one budget per insurer.

See `integrations.pacing.arithmetic` for the rules and `integrations.pacing.shared_state` for
where the state lives.
"""

from __future__ import annotations

import threading
from collections import Counter

from integrations.pacing.shared_state import SharedState, shared_state


class SharedRetryBudget:
    def __init__(self, state: SharedState | None = None) -> None:
        self.state = state or shared_state()

    def record_first_attempt(self, insurer_code: str, *, ok: bool, ratio: float = 0.2) -> None:
        """`ratio` is the operation policy's `retry_budget_ratio`: what a success deposits."""
        self.state.budget_record_first(insurer_code, ok=ok, ratio=ratio)

    def try_spend(self, insurer_code: str) -> bool:
        """A retry costs one token whatever the operation; `ratio` only shapes the deposits."""
        return self.state.budget_try_spend(insurer_code)

    def refund(self, insurer_code: str) -> None:
        self.state.budget_refund(insurer_code)


class BatchedRetryBudget(SharedRetryBudget):
    """The shared budget for a caller that writes its results in batches (a sync drain).

    Spends and refunds go to the shared state at once, as they decide whether a call is made.
    First attempts are only counted (and their deposits made) when the caller writes its batch
    (`flush`, every few tens of milliseconds): one statement per insurer per batch instead of two
    per call, the busiest writes of a drain at hundreds of calls a second. Deposits only ever
    add and the bucket's cap absorbs, so n at once leave the bucket as n in a row would; other
    processes see them up to one batch later, as they see the batch's attempt rows.
    """

    def __init__(self, state: SharedState | None = None) -> None:
        super().__init__(state)
        self._lock = threading.Lock()
        # (insurer, ok, ratio) -> first attempts not yet written
        self._pending: Counter[tuple[str, bool, float]] = Counter()

    def record_first_attempt(self, insurer_code: str, *, ok: bool, ratio: float = 0.2) -> None:
        with self._lock:
            self._pending[(insurer_code, ok, ratio)] += 1

    def flush(self) -> int:
        """Write what was counted since the last flush; returns how many first attempts."""
        with self._lock:
            pending, self._pending = self._pending, Counter()
        written = 0
        try:
            for (insurer_code, ok, ratio), times in pending.items():
                self.state.budget_record_first(insurer_code, ok=ok, ratio=ratio, times=times)
                written += times
                pending[(insurer_code, ok, ratio)] = 0
        except Exception:
            with self._lock:
                self._pending.update(+pending)  # kept for the next flush
            raise
        return written
