"""Sandbox insurers by code, registered like the platform's adapters (``integrations/adapters/registry.py``).

Each insurer package decorates its class with :func:`register`; importing it is all it takes
(``sandbox/insurers/__init__.py`` imports every package there, a test-only insurer imports its
own). Whatever
differs per insurer is stated on the class, not in tables keyed by the four codes elsewhere:
``credential_keys``, ``default_accounts``, ``prefix``, ``port_offset``, ``realistic_latency_ms``,
``transient_faults`` (what the cross-insurer tests inject).
Everything that used to list the insurers (``start_all``, ``python -m sandbox``, the demo
manifest, the tests) reads this registry, so a fifth insurer is one package and one import.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .insurer import Insurer

_registry: dict[str, type[Insurer]] = {}


def _check(insurer_class: type[Insurer]) -> None:
    """A mistake in what an insurer states must fail at import, not as an odd test failure later."""
    name = insurer_class.__name__
    attributes = ("code", "prefix", "document_name", "operations", "credential_keys", "default_accounts")
    for attribute in (*attributes, "transient_faults"):
        if not hasattr(insurer_class, attribute):
            raise TypeError(f"sandbox insurer {name} must state {attribute}")
    offset = getattr(insurer_class, "port_offset", None)
    if not isinstance(offset, int) or isinstance(offset, bool) or offset < 0:
        raise TypeError(f"sandbox insurer {name} must state port_offset (an integer >= 0)")
    keys = insurer_class.credential_keys
    if not keys or not all(isinstance(key, str) and key for key in keys):
        raise TypeError(f"sandbox insurer {name}: credential_keys must be non-empty strings")
    for account in insurer_class.default_accounts:
        if set(account.get("credentials", {})) != set(keys) or not account.get("agency_code"):
            raise TypeError(f"sandbox insurer {name}: each default account needs agency_code and {list(keys)}")
    faults = insurer_class.transient_faults
    if len(faults) != 3 or not all(isinstance(fault, dict) and fault.get("fault") for fault in faults):
        raise TypeError(f"sandbox insurer {name}: transient_faults must be three fault rules (gateway, reset, busy)")
    for other in _registry.values():
        if other.code == insurer_class.code or other is insurer_class:
            continue
        for attribute in ("prefix", "port_offset"):
            if getattr(other, attribute) == getattr(insurer_class, attribute):
                raise ValueError(f"sandbox insurers {other.__name__} and {name} share {attribute}")


def register(insurer_class: type[Insurer]) -> type[Insurer]:
    """Class decorator: serve this insurer in ``start_all``, ``python -m sandbox`` and the tests."""
    _check(insurer_class)
    existing = _registry.get(insurer_class.code)
    if existing is not None and existing is not insurer_class:
        raise ValueError(f"two sandbox insurers claim code {insurer_class.code!r}")
    _registry[insurer_class.code] = insurer_class
    return insurer_class


def unregister(code: str) -> None:
    """Forget an insurer; for a test that registers a throw-away one."""
    _registry.pop(code, None)


def insurer_class(code: str) -> type[Insurer]:
    try:
        return _registry[code]
    except KeyError:
        raise ValueError(f"unknown insurer {code!r}; expected one of {registered_codes()}") from None


def registered_codes() -> list[str]:
    """The codes in port order (``port_offset``), which is also the order ``start_all`` answers in."""
    return sorted(_registry, key=lambda code: (_registry[code].port_offset, code))


def port_for(code: str, base_port: int) -> int:
    """An insurer's port when the sandbox runs on fixed ports from ``base_port``."""
    return base_port + insurer_class(code).port_offset


def realistic_config(code: str) -> dict[str, Any]:
    """The demo latencies the insurer states (``realistic_latency_ms``), as a config update."""
    return {"latency_ms": copy.deepcopy(insurer_class(code).realistic_latency_ms)}


class _DefaultAccounts(Mapping[str, list[dict[str, Any]]]):
    """``DEFAULT_ACCOUNTS[code]``: the sample accounts each registered insurer states.

    Read from the registry on every access, so an insurer registered later (a test-only one)
    is in it too; copies, so a test that edits what it got cannot change the sandbox.
    """

    def __getitem__(self, code: str) -> list[dict[str, Any]]:
        if code not in _registry:
            raise KeyError(code)
        return copy.deepcopy(list(_registry[code].default_accounts))

    def __iter__(self) -> Iterator[str]:
        return iter(registered_codes())

    def __len__(self) -> int:
        return len(_registry)

    def __repr__(self) -> str:
        return f"DEFAULT_ACCOUNTS({dict(self)!r})"


DEFAULT_ACCOUNTS: Mapping[str, list[dict[str, Any]]] = _DefaultAccounts()
