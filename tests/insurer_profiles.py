"""What the cross-insurer tests need to know about each insurer, keyed by code, in one place.

Tests that run at every insurer take the list from the registries (`registered_codes()`); when
such a test needs something said in the insurer's own words (a fault code, say), it reads it
here. `tests/sandbox/test_registry.py` holds this mapping to the registered insurers, so a new
insurer fails loudly until its profile is written, instead of silently skipping the tests.
(The adapter fuzz keeps its answer shapes beside it: `ANSWER_PROFILES` in
`tests/hardening/test_adapter_fuzz.py`, held the same way.)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class InsurerTestProfile:
    # One-off transient faults in the insurer's own words (sandbox fault rules without the
    # operation), each worth exactly one retry: a gateway error, a dropped connection, and the
    # insurer's own "busy / unavailable" answer.
    transient_faults: tuple[dict[str, Any], ...]


PROFILES: dict[str, InsurerTestProfile] = {
    "anka": InsurerTestProfile(
        transient_faults=(
            {"fault": "error", "code": "BAD_GATEWAY"},
            {"fault": "reset"},
            {"fault": "error", "code": "SERVICE_UNAVAILABLE", "wait_seconds": 1},
        )
    ),
    "bogazici": InsurerTestProfile(
        transient_faults=(
            {"fault": "html", "http_status": 502},
            {"fault": "reset"},
            {"fault": "error", "code": "BS-900"},
        )
    ),
    "cinar": InsurerTestProfile(
        transient_faults=(
            {"fault": "html", "http_status": 502},
            {"fault": "reset"},
            {"fault": "error", "code": "SYS_BUSY"},
        )
    ),
    "deniz": InsurerTestProfile(
        transient_faults=(
            {"fault": "error", "code": "SERVICE_UNAVAILABLE"},
            {"fault": "reset"},
            {"fault": "error", "code": "INTERNAL_ERROR"},
        )
    ),
    # The fifth, test-only insurer (tests/fifth_insurer).
    "ege": InsurerTestProfile(
        transient_faults=(
            {"fault": "html", "http_status": 502},
            {"fault": "reset"},
            {"fault": "error", "code": "E_DOWN", "wait_seconds": 1},
        )
    ),
}


def profile(code: str) -> InsurerTestProfile:
    try:
        return PROFILES[code]
    except KeyError:
        raise LookupError(f"no test profile for insurer {code!r}: add one to tests/insurer_profiles.py") from None
