"""The baselines' own request builders: each insurer's hand-written `BENCH` wire, beside its sandbox.

The naive and the plain-tenacity clients do not use the platform's adapters, channel or
taxonomy: they know how to ask each insurer for a trafik quote or a policy's status, and how to
tell success from anything else (`sandbox/hand_wire.py`). They are found with the sandbox
insurers, so an insurer the sandbox serves is in the baselines without an edit here.

No Django here: the fan-out scenario runs these clients in a process of their own.
"""

from __future__ import annotations

from collections.abc import Mapping

from sandbox.hand_wire import Answer, Wire, by_code, session

__all__ = ["Answer", "Wire", "session", "wire_classes", "wire_for"]


def wire_classes() -> dict[str, type[Wire]]:
    """Every registered sandbox insurer's baseline wire, by code."""
    return by_code("BENCH")


def wire_for(code: str, base_url: str, credentials: Mapping[str, str]) -> Wire:
    wire_class: type[Wire] = by_code("BENCH", [code])[code]
    return wire_class(base_url, credentials)
