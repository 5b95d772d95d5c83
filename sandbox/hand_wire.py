"""What every insurer's hand-written wire clients share, and how they are found.

Beside its sandbox, each insurer has clients written by hand from CONTRACTS.md: the sandbox
insurer is a package (`sandbox/insurers/<code>/`) and its `wire` module names three classes.
They are written from the contract, never from the sandbox's code or the platform's adapters,
so a test reads "send this on the wire, expect that back" and a baseline knows only what a
hand-written insurer client knows:

- `BENCH`: a :class:`Wire`, the benchmarks' naive and plain-tenacity baselines (a trafik quote
  and a policy's status, each an :class:`Answer`);
- `CLIENT`: the sandbox's own contract tests, built as `CLIENT(server, http)` (a
  `SandboxServer`, a `requests.Session`; it keeps `code`, `server`, `http`, `url`). The raw
  calls give the `requests.Response` back and take `timeout=` and the insurer's own
  credentials or reference arguments: `request(...)`, `trafik_quote(fields=None, **kw)`,
  `quote_no(**kw)`, `issue(quote_no, *, card="tok_ok", ...)`, `policy_no(**kw)` (a freshly
  issued one), `document(policy_no, **kw)`. What the tests every insurer shares need to know
  of its words, stated here instead of in tables keyed by code:
  `content_type` (its answers' `Content-Type`), `status_words` (`ACTIVE`, `CANCELLED`,
  `EXPIRED` -> its wire's word), `succeeded(response)` (a business success in its terms),
  `is_throttle_signal(response)` (its throttle answer, wait signal included),
  `parse(content)` (reads a body; raises `ValueError` or `ParseError` on garbage),
  `status_word(policy_no)` (None when it does not know the policy) and
  `calls_as(credentials, count)` (`count` calls under other credentials, set-up calls such as
  a token counted);
- `CANCEL`: the `CLIENT` for cancellation and the production list, each answer read back into
  one shape so what every insurer shares is tested once: `cancel(policy_no, reason,
  effective_on, *, ref)` -> :class:`Cancelled`, `list_page(issued_from, issued_to,
  position=None)` -> :class:`Page` (and the raw `cancel_response`, `list_response`); its
  codes: `reasons` (the platform's reason -> its word), `not_found`, `invalid`,
  `invalid_reason` (an unknown reason), `not_allowed`, `claim_refusal` (a DASK policy with an
  open claim), `already`, `repeat` (the same reference again), `range_invalid`,
  `internal_error` (the server error a fault on `cancel_policy` answers with).

The benchmarks and the tests read them through :func:`wire_module` for every registered
insurer, so a new insurer's clients are found with its sandbox, nothing listed by hand.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from types import ModuleType
from typing import Any

import requests
from requests.adapters import HTTPAdapter

from .domain import building_id_for
from .registry import insurer_class, registered_codes

ROLES = ("BENCH", "CLIENT", "CANCEL")

# The contract's sample inputs, as the platform names them.
TCKN = "10000000146"
OTHER_TCKN = "17291716060"
VKN = "4540536920"
YEAR = datetime.now(UTC).year
TRAFIK = {"plate": "34ABC123", "owner_id": TCKN, "registration_serial": "AB123456", "usage": "private"}
KASKO = {**TRAFIK, "model_year": YEAR - 3, "brand_code": "012", "model_code": "345"}
UAVT = "1234567890"
DASK_BASE = {
    "uavt_code": UAVT,
    "construction_type": "reinforced_concrete",
    "construction_year": 2005,
    "floor_count": 5,
    "gross_m2": 120,
    "damage_status": "none",
    "owner_id": TCKN,
}


def wire_module(code: str) -> ModuleType:
    """The `wire` module beside insurer `code`'s sandbox, checked to name every role."""
    package = insurer_class(code).__module__
    try:
        module = importlib.import_module(f"{package}.wire")
    except ModuleNotFoundError as exc:
        if exc.name != f"{package}.wire":
            raise
        raise TypeError(f"sandbox insurer {code!r} has no hand-written wire clients ({package}.wire)") from None
    missing = [role for role in ROLES if not isinstance(getattr(module, role, None), type)]
    if missing:
        raise TypeError(f"{module.__name__} must name {', '.join(missing)} (see sandbox/hand_wire.py)")
    return module


def by_code(role: str, codes: list[str] | None = None) -> dict[str, type]:
    """One role's class for every registered insurer (or `codes`), by code."""
    return {code: getattr(wire_module(code), role) for code in (registered_codes() if codes is None else codes)}


# --- the benchmarks' baselines ------------------------------------------------------------

TIMEOUT = (3.05, 20.0)


@dataclass(frozen=True)
class Answer:
    """`ok` or not; `code` is kept for the benchmark's tally and plots, never for a decision
    (the naive client retries nothing, plain tenacity retries every non-success)."""

    ok: bool
    status: int | None
    code: str = ""


_local = threading.local()


def session() -> requests.Session:
    """One keep-alive session per thread, library retries off: the same footing as the platform."""
    current = getattr(_local, "session", None)
    if current is None:
        current = requests.Session()
        adapter = HTTPAdapter(max_retries=0, pool_connections=8, pool_maxsize=8)
        current.mount("http://", adapter)
        current.trust_env = False
        _local.session = current
    return current


def send(method: str, url: str, **kwargs: Any) -> requests.Response | Answer:
    """The request, or a failed :class:`Answer` naming the exception when there was no answer."""
    try:
        return session().request(method, url, timeout=TIMEOUT, allow_redirects=False, **kwargs)
    except requests.RequestException as exc:
        return Answer(False, None, type(exc).__name__)


def json_of(response: requests.Response) -> Any:
    try:
        return response.json()
    except ValueError:
        return None


class Wire:
    """One insurer's baseline client: what most hand-written insurer clients know, no more."""

    code = ""

    def __init__(self, base_url: str, credentials: Mapping[str, str]) -> None:
        self.base_url = base_url.rstrip("/")
        self.credentials = dict(credentials)

    def prepare(self) -> None:
        """Set-up that is not a business call (a token), done before the clock starts."""

    def trafik_quote(self, fields: Mapping[str, Any]) -> Answer:
        raise NotImplementedError

    def policy_status(self, policy_no: str) -> Answer:
        raise NotImplementedError


# --- the contract tests' shapes -------------------------------------------------------------


@dataclass
class Cancelled:
    """A cancellation's answer: `code` "OK" for a success, else the insurer's own code; `result`
    the cancellation it carries as `{"policy_no", "refund", "cancelled_on"}` (ISO date)."""

    code: str
    result: dict[str, str] | None = None
    raw: Any = None


@dataclass
class Page:
    """A production list page: the items in the platform's words, and what the next page is
    asked by (None after the last)."""

    code: str
    items: list[dict[str, Any]] = field(default_factory=list)
    following: Any = None


def dask(code: str, **changes: Any) -> dict[str, Any]:
    """DASK quote input with the building id insurer `code`'s address call returns."""
    fields = {**DASK_BASE, **changes}
    fields.setdefault("building_id", building_id_for(code, fields["uavt_code"]))
    return fields
