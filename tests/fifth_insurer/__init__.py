"""Ege Sigorta (test): a fifth insurer that exists only in the tests.

The proof that a new insurer is its adapter package (adapter, answer samples) and its sandbox
package, and nothing else edited (docs/adding-an-insurer.md): `tests/conftest.py` imports this
package, which registers the adapter (`adapter.py`, in `integrations.adapters.registry`) and
the sandbox insurer (`sandbox/`, in `sandbox.registry`; the contract tests find its
hand-written `sandbox/wire.py` from there) before any test module is collected. Every test
parametrised over `registered_codes()`, the `sandbox` fixture's servers, the sandbox's
contract tests and the seeded accounts then include it; nothing in the product imports it,
and the demo (`scripts/run.sh`, `python -m sandbox`, the benchmarks' own processes) never
sees it.
"""

from __future__ import annotations

from typing import Any

from . import adapter, sandbox  # noqa: F401  (registers both halves)

# Insurers registered by the test session only: a subprocess (`python -m sandbox`, the
# benchmarks) serves the shipped ones, so tests comparing against one leave these out.
TEST_ONLY_CODES = frozenset({adapter.EgeAdapter.code})


def only_shipped_adapters(monkeypatch: Any) -> None:
    """For a test whose insurers come from a process of its own (`seed_demo` asking `python -m
    sandbox` for the manifest): the platform knows only the shipped insurers too, as in the demo."""
    from integrations.adapters import registry

    shipped = {code: cls for code, cls in registry._registry.items() if code not in TEST_ONLY_CODES}
    monkeypatch.setattr(registry, "_registry", shipped)
