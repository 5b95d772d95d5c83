"""Adapters by insurer code: code registers implementations, database rows tune them."""

from __future__ import annotations

from integrations.adapters.base import InsurerAdapter

_registry: dict[str, type[InsurerAdapter]] = {}


def register(adapter_class: type[InsurerAdapter]) -> type[InsurerAdapter]:
    if not isinstance(getattr(adapter_class, "issuance_deduplicated", None), bool):
        raise TypeError(f"{adapter_class.__name__} must state issuance_deduplicated (True or False)")
    existing = _registry.get(adapter_class.code)
    if existing is not None and existing is not adapter_class:
        raise ValueError(f"two adapters claim insurer code {adapter_class.code!r}")
    _registry[adapter_class.code] = adapter_class
    return adapter_class


def adapter_class(code: str) -> type[InsurerAdapter]:
    try:
        return _registry[code]
    except KeyError:
        raise LookupError(f"no adapter for insurer {code!r}; known: {', '.join(sorted(_registry))}") from None


def registered_codes() -> list[str]:
    return sorted(_registry)


def forget_process_state() -> None:
    """Every adapter drops what it keeps between calls (tests and benchmarks reset the sandbox,
    which forgets the tokens it gave out), so no caller names the insurer that keeps something."""
    for registered in _registry.values():
        registered.forget_process_state()
