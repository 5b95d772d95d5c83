"""The engine's retry-budget hook, backed by the shared state: one budget per insurer.

See `integrations.pacing.arithmetic` for the rules and `integrations.pacing.shared_state` for
where the state lives.
"""

from __future__ import annotations

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
