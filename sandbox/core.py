"""Insurer-independent machinery of a sandbox server: config, accounts, rate limits, faults, counts.

One :class:`SandboxState` per server. It is what tests script (directly from Python, or via
the ``/_sandbox/`` control endpoints) and what they assert on afterwards (``counts()``), so
everything here is guarded by one lock and every mutating method validates its input fully
before changing anything.
"""

from __future__ import annotations

import copy
import math
import random
import threading
import time
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal, InvalidOperation
from typing import Any

from . import domain
from .ledger import Ledger

BUSINESS_OPERATIONS = tuple(domain.OPERATION_FIELDS)  # the eight; helper calls are per insurer

DEFAULT_CONFIG: dict[str, Any] = {
    "latency_ms": [0, 0],
    "seed": 0,
    "quote_ttl_seconds": 900,
    "token_ttl_seconds": 300,
    "issuance_processing_seconds": 0.3,
    "poll_lag_seconds": 0,
    # How long after issuance the policy's PDF is "not ready yet" (CONTRACTS.md: usually < 10 s).
    "document_delay_seconds": 0,
    "default_rate_per_second": 50.0,
    "default_burst": 50,
    "known_policies_only": True,
}

COMMON_FAULT_KINDS = frozenset(
    {
        "error",
        "throttle",
        "latency",
        "hang",
        "reset",
        "html",
        "empty",
        "garbage",
        "wrong_content_type",
        "commit_then_drop",
        "echo",
    }
)
ISSUANCE_ONLY_FAULT_KINDS = frozenset({"commit_then_drop", "reject"})
FAULT_RULE_KEYS = frozenset(
    {
        "operation",
        "fault",
        "code",
        "times",
        "rate",
        "after",
        "match",
        "http_status",
        "seconds",
        "wait_seconds",
        "drop",
        "reason",
        "commit",
    }
)
MATCHABLE_FIELDS = frozenset(domain.FIELD_RULES)


def _iso_date_or_none(value: Any, key: str) -> date | None:
    if value is None:
        return None
    try:
        return date.fromisoformat(value)
    except (TypeError, ValueError):
        raise ConfigError(f"{key} must be a YYYY-MM-DD date") from None


def _seed_extras(item: Mapping[str, Any]) -> dict[str, Any]:
    """A seeded policy's optional production-list and cancellation fields, checked."""
    unknown = set(item) - SEED_POLICY_KEYS
    _require(not unknown, f"unknown policy keys: {sorted(unknown)}")
    agency, product, premium = item.get("agency"), item.get("product"), item.get("premium")
    open_claim = item.get("open_claim", False)
    _require(agency is None or (isinstance(agency, str) and agency != ""), "agency must be an agency code")
    _require(product is None or product in domain.PRODUCTS, f"product must be one of {domain.PRODUCTS}")
    amount = None
    if premium is not None:
        _require(isinstance(premium, str), "premium must be a decimal string")
        try:
            amount = Decimal(premium)
        except InvalidOperation:
            raise ConfigError("premium must be a decimal string") from None
        _require(amount.is_finite() and amount >= 0, "premium must be a decimal string >= 0")
    _require(isinstance(open_claim, bool), "open_claim must be a boolean")
    return {
        "agency": agency,
        "product": product,
        "premium": amount,
        "issued_on": _iso_date_or_none(item.get("issued_on"), "issued_on"),
        "open_claim": open_claim,
    }


SEED_POLICY_KEYS = frozenset(
    {
        "policy_no",
        "status",
        "quote_no",
        "starts_on",
        "ends_on",
        "agency",
        "product",
        "premium",
        "issued_on",
        "open_claim",
    }
)


class ConfigError(ValueError):
    """Bad input to the control API; answered with 400 and the message."""


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _require(condition: bool, message: str) -> None:
    if not condition:
        raise ConfigError(message)


@dataclass
class Account:
    agency_code: str
    credentials: dict[str, str]
    rate_per_second: float | None = None
    burst: int | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "agency_code": self.agency_code,
            "credentials": dict(self.credentials),
            "rate_per_second": self.rate_per_second,
            "burst": self.burst,
        }


class TokenBucket:
    """Classic token bucket; rate and burst are passed on every take so config changes apply at once."""

    def __init__(self, burst: float, now: float) -> None:
        self.tokens = float(burst)
        self.updated = now

    def take(self, now: float, rate: float, burst: float) -> float:
        """Consume one token and return 0, or return the seconds until a token is available."""
        self.tokens = min(float(burst), self.tokens + (now - self.updated) * rate)
        self.updated = now
        if self.tokens >= 1.0:
            self.tokens -= 1.0
            return 0.0
        return (1.0 - self.tokens) / rate


_ABSENT = object()


@dataclass
class FaultRule:
    """One ``POST /_sandbox/faults`` rule plus how often it has seen and fired."""

    operation: str
    fault: str
    code: str | None = None
    times: int | None = None
    rate: float | None = None
    after: int = 0
    match: dict[str, str] = field(default_factory=dict)
    http_status: int | None = None
    seconds: float | None = None
    wait_seconds: Any = _ABSENT  # absent: the kind's default; None: "no value" (e.g. no TekrarDenemeSn)
    drop: str = "reset"
    reason: str | None = None
    commit: bool = False
    seen: int = 0
    applied: int = 0

    def wait(self, default: float | None) -> float | None:
        return default if self.wait_seconds is _ABSENT else self.wait_seconds

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"operation": self.operation, "fault": self.fault, "times": self.times}
        for key in ("code", "rate", "http_status", "seconds", "reason"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        if self.wait_seconds is not _ABSENT:
            out["wait_seconds"] = self.wait_seconds
        out.update(after=self.after, match=dict(self.match), drop=self.drop, commit=self.commit)
        out.update(seen=self.seen, applied=self.applied)
        return out

    def exhausted(self) -> bool:
        return self.times is not None and self.applied >= self.times

    def matches(self, operation: str, fields: Mapping[str, Any]) -> bool:
        # "*" is any of the six business operations; helper calls (token, lookups) only by name.
        if self.operation != operation and not (self.operation == "*" and operation in BUSINESS_OPERATIONS):
            return False
        return all(key in fields and str(fields[key]) == value for key, value in self.match.items())


def parse_fault_rule(raw: Any, *, operations: Iterable[str], kinds: Iterable[str]) -> FaultRule:
    """Validate one rule dict strictly: a typo in a test's fault rule must fail loudly."""
    _require(isinstance(raw, dict), "each fault rule must be an object")
    unknown = set(raw) - FAULT_RULE_KEYS
    _require(not unknown, f"unknown fault rule keys: {sorted(unknown)}")
    operations, kinds = set(operations), set(kinds)
    operation, kind = raw.get("operation"), raw.get("fault")
    _require(operation == "*" or operation in operations, f"operation must be '*' or one of {sorted(operations)}")
    _require(kind in kinds, f"fault must be one of {sorted(kinds)}")
    if kind in ISSUANCE_ONLY_FAULT_KINDS:
        _require(
            operation in domain.MONEY_OPERATIONS,
            f"fault {kind!r} applies to operations {' and '.join(map(repr, domain.MONEY_OPERATIONS))} only",
        )
    code = raw.get("code")
    _require(code is None or (isinstance(code, str) and code != ""), "code must be a non-empty string")
    _require(kind != "error" or code is not None, "fault 'error' needs a 'code'")
    rate = raw.get("rate")
    _require(rate is None or (_is_number(rate) and 0 <= rate <= 1), "rate must be a number in [0, 1]")
    times = raw.get("times", 1 if rate is None else None)
    _require(
        times is None or (isinstance(times, int) and not isinstance(times, bool) and times >= 1),
        "times must be an integer >= 1 or null",
    )
    after = raw.get("after", 0)
    _require(isinstance(after, int) and not isinstance(after, bool) and after >= 0, "after must be an integer >= 0")
    match = raw.get("match") or {}
    _require(isinstance(match, dict), "match must be an object")
    _require(set(match) <= MATCHABLE_FIELDS, f"match keys must be among {sorted(MATCHABLE_FIELDS)}")
    http_status = raw.get("http_status")
    _require(
        http_status is None or (isinstance(http_status, int) and 100 <= http_status <= 599),
        "http_status must be an HTTP status code",
    )
    seconds = raw.get("seconds")
    _require(seconds is None or (_is_number(seconds) and seconds >= 0), "seconds must be a number >= 0")
    wait_seconds = raw.get("wait_seconds", _ABSENT)
    _require(
        wait_seconds in (_ABSENT, None) or (_is_number(wait_seconds) and wait_seconds >= 0),
        "wait_seconds must be a number >= 0 or null",
    )
    drop = raw.get("drop", "reset")
    _require(drop in ("reset", "hang"), "drop must be 'reset' or 'hang'")
    reason = raw.get("reason")
    _require(reason is None or isinstance(reason, str), "reason must be a string")
    commit = raw.get("commit", False)
    _require(isinstance(commit, bool), "commit must be a boolean")
    _require(
        not commit or (kind == "error" and operation in domain.MONEY_OPERATIONS),
        f"commit applies to 'error' faults on {' and '.join(map(repr, domain.MONEY_OPERATIONS))}",
    )
    return FaultRule(
        operation=operation,
        fault=kind,
        code=code,
        times=times,
        rate=rate,
        after=after,
        match={key: str(value) for key, value in match.items()},
        http_status=http_status,
        seconds=seconds,
        wait_seconds=wait_seconds,
        drop=drop,
        reason=reason,
        commit=commit,
    )


def _parse_latency(value: Any, operations: Iterable[str]) -> Any:
    def pair(item: Any) -> list[float]:
        _require(
            isinstance(item, (list, tuple))
            and len(item) == 2
            and all(_is_number(v) and v >= 0 for v in item)
            and item[0] <= item[1],
            "latency_ms must be [min, max] milliseconds (or an object of operation -> [min, max])",
        )
        return [item[0], item[1]]

    if isinstance(value, dict):
        allowed = {*operations, "*"}
        _require(set(value) <= allowed, f"latency_ms keys must be among {sorted(allowed)}")
        return {key: pair(item) for key, item in value.items()}
    return pair(value)


def validate_config(changes: Mapping[str, Any], operations: Iterable[str]) -> dict[str, Any]:
    """Check a partial config update and return it normalised."""
    unknown = set(changes) - set(DEFAULT_CONFIG)
    _require(not unknown, f"unknown config keys: {sorted(unknown)}")
    out: dict[str, Any] = {}
    for key, value in changes.items():
        if key == "latency_ms":
            out[key] = _parse_latency(value, operations)
        elif key == "seed":
            _require(isinstance(value, int) and not isinstance(value, bool), "seed must be an integer")
            out[key] = value
        elif key in ("quote_ttl_seconds", "token_ttl_seconds", "default_rate_per_second"):
            _require(_is_number(value) and value > 0, f"{key} must be a number > 0")
            out[key] = value
        elif key in ("issuance_processing_seconds", "poll_lag_seconds", "document_delay_seconds"):
            _require(_is_number(value) and value >= 0, f"{key} must be a number >= 0")
            out[key] = value
        elif key == "default_burst":
            _require(
                isinstance(value, int) and not isinstance(value, bool) and value >= 1,
                "default_burst must be an integer >= 1",
            )
            out[key] = value
        elif key == "known_policies_only":
            _require(isinstance(value, bool), "known_policies_only must be a boolean")
            out[key] = value
    return out


class SandboxState:
    """Everything one sandbox insurer remembers; scriptable from Python and over ``/_sandbox/``."""

    def __init__(
        self,
        code: str,
        *,
        operations: Iterable[str],
        fault_kinds: Iterable[str],
        prefix: str,
        credential_keys: Iterable[str],
        default_accounts: Iterable[Mapping[str, Any]] = (),
        base_config: Mapping[str, Any] | None = None,
    ) -> None:
        self.code = code
        # The credential that identifies an account (first) and the ones that prove it.
        self.credential_keys = tuple(credential_keys)
        self._default_accounts = copy.deepcopy(list(default_accounts))
        self.operations = tuple(operations)
        self.fault_kinds = frozenset(fault_kinds)
        self.lock = threading.RLock()
        self.ledger = Ledger(code, prefix)
        # reset() returns to this: the defaults plus whatever the server was started with.
        self._base_config = {**copy.deepcopy(DEFAULT_CONFIG), **validate_config(base_config or {}, self.operations)}
        self.reset()

    # --- control API -------------------------------------------------------------------------

    def reset(self) -> None:
        """Clear faults, counts, quotes, policies and tokens; restore the start config and accounts."""
        with self.lock:
            self.config: dict[str, Any] = copy.deepcopy(self._base_config)
            self._accounts: dict[str, Account] = {}
            self._buckets: dict[str, TokenBucket] = {}
            self._install_accounts(self._parse_accounts(self._default_accounts))
            self._faults: list[FaultRule] = []
            self._received: Counter[str] = Counter()
            self._throttled: Counter[str] = Counter()
            self._faulted: Counter[str] = Counter()
            self._by_account: Counter[str] = Counter()
            self.ledger.clear()
            self.ledger.document_delay = self.config["document_delay_seconds"]
            self._seed_rngs()

    def _seed_rngs(self) -> None:
        # Separate streams, so turning latency on does not change which calls a fault hits.
        self._fault_rng = random.Random(self.config["seed"])
        self._latency_rng = random.Random(f"latency-{self.config['seed']}")

    def configure(self, **changes: Any) -> dict[str, Any]:
        """Partial config update (same keys as ``PUT /_sandbox/config``); returns the full config."""
        checked = validate_config(changes, self.operations)
        with self.lock:
            self.config.update(copy.deepcopy(checked))
            self.ledger.document_delay = self.config["document_delay_seconds"]
            if "seed" in checked:
                self._seed_rngs()
            return self.get_config()

    def get_config(self) -> dict[str, Any]:
        with self.lock:
            return copy.deepcopy(self.config)

    def add_faults(self, rules: object) -> list[dict[str, Any]]:
        """Append fault rules (same dicts as ``POST /_sandbox/faults``); returns all rules.

        ``rules`` is checked here (it may be whatever a control request's JSON holds)."""
        if not isinstance(rules, (list, tuple)):
            raise ConfigError("faults must be a list of rule objects")
        parsed = [parse_fault_rule(rule, operations=self.operations, kinds=self.fault_kinds) for rule in rules]
        with self.lock:
            self._faults.extend(parsed)
            return self.faults()

    def clear_faults(self) -> None:
        with self.lock:
            self._faults.clear()

    def faults(self) -> list[dict[str, Any]]:
        with self.lock:
            return [rule.as_dict() for rule in self._faults]

    def counts(self) -> dict[str, Any]:
        with self.lock:
            policies_by_quote, issued_total = self.ledger.issued_summary()
            return {
                "received": dict(self._received),
                "throttled": dict(self._throttled),
                "faults": dict(self._faulted),
                "received_by_account": dict(self._by_account),
                "total_received": sum(self._received.values()),
                "total_throttled": sum(self._throttled.values()),
                "total_faults": sum(self._faulted.values()),
                "policies_by_quote": policies_by_quote,
                "issued_total": issued_total,
                "cancellations_by_policy": self.ledger.cancellations_summary(),
            }

    def add_accounts(self, accounts: object) -> list[dict[str, Any]]:
        """Add or replace accounts (keyed by the identifying credential); their buckets start full.

        ``accounts`` is checked here (it may be whatever a control request's JSON holds)."""
        parsed = self._parse_accounts(accounts)
        with self.lock:
            self._install_accounts(parsed)
            return self.accounts()

    def accounts(self) -> list[dict[str, Any]]:
        with self.lock:
            return [account.as_dict() for account in self._accounts.values()]

    def seed_policies(self, policies: object) -> None:
        """Policies that exist at the insurer without the platform having issued them (nightly-sync
        tests; the insurer's own portal, a duplicate, for the production list); not counted as issued.

        Each: ``policy_no``, ``status``, optional ``quote_no``, ``starts_on``/``ends_on``, and
        ``agency``, ``product``, ``premium``, ``issued_on``, ``open_claim`` (see ``Ledger.seed_policy``).
        ``policies`` is checked here (it may be whatever a control request's JSON holds).
        """
        if not isinstance(policies, (list, tuple)):
            raise ConfigError("policies must be a list")
        checked: list[tuple[Any, Any, Any, date | None, date | None, dict[str, Any]]] = []
        for item in policies:
            _require(isinstance(item, dict), "each policy must be an object")
            policy_no, status, quote_no = item.get("policy_no"), item.get("status"), item.get("quote_no")
            starts_on, ends_on = (_iso_date_or_none(item.get(key), key) for key in ("starts_on", "ends_on"))
            _require(domain.FIELD_RULES["policy_no"](policy_no), "policy_no must be letters, digits and dashes")
            _require(status in domain.POLICY_STATUSES, f"status must be one of {domain.POLICY_STATUSES}")
            _require(
                quote_no is None or domain.FIELD_RULES["quote_no"](quote_no),
                "quote_no must be letters, digits and dashes",
            )
            checked.append((policy_no, status, quote_no, starts_on, ends_on, _seed_extras(item)))
        with self.lock:
            for policy_no, status, quote_no, starts_on, ends_on, extras in checked:
                self.ledger.seed_policy(policy_no, status, quote_no, starts_on, ends_on, **extras)

    def set_policy_status(self, policy_no: str, status: object) -> None:
        """Change a known policy's status; ``KeyError`` if the insurer has no such policy.

        ``status`` is checked here (it may be whatever a control request's JSON holds)."""
        if not (isinstance(status, str) and status in domain.POLICY_STATUSES):
            raise ConfigError(f"status must be one of {domain.POLICY_STATUSES}")
        with self.lock:
            policy = self.ledger.policies[policy_no]
            policy.status = status
            if status != "CANCELLED":
                policy.cancellation = None  # back in force: a new cancellation may end it

    # --- used while serving a call ----------------------------------------------------------------

    def authenticate(self, credentials: Mapping[str, Any]) -> Account | None:
        """The account whose every credential equals the presented one, or None."""
        keys = self.credential_keys
        with self.lock:
            account = self._accounts.get(str(credentials.get(keys[0])))
            if account is None or any(credentials.get(key) != account.credentials.get(key) for key in keys):
                return None
            return account

    def account_for_identity(self, identity: str) -> Account | None:
        with self.lock:
            return self._accounts.get(identity)

    def take_token(self, account: Account) -> float:
        """Consume a token of the account's bucket; the wait in seconds when it is empty."""
        with self.lock:
            rate = account.rate_per_second or self.config["default_rate_per_second"]
            burst = account.burst or self.config["default_burst"]
            identity = account.credentials[self.credential_keys[0]]
            now = time.monotonic()
            bucket = self._buckets.setdefault(identity, TokenBucket(burst, now))
            return bucket.take(now, rate, burst)

    def pick_fault(self, operation: str, fields: Mapping[str, Any]) -> FaultRule | None:
        """The first rule that fires for this call (rules are checked in the order added)."""
        with self.lock:
            for rule in self._faults:
                if rule.exhausted() or not rule.matches(operation, fields):
                    continue
                rule.seen += 1
                if rule.seen <= rule.after:
                    continue
                if rule.rate is not None and self._fault_rng.random() >= rule.rate:
                    continue
                rule.applied += 1
                self._faulted[operation] += 1
                return rule
            return None

    def latency_seconds(self, operation: str) -> float:
        with self.lock:
            latency = self.config["latency_ms"]
            if isinstance(latency, dict):
                latency = latency.get(operation, latency.get("*", [0, 0]))
            low, high = latency
            return self._latency_rng.uniform(low, high) / 1000.0 if high > 0 else 0.0

    def record_received(self, operation: str) -> None:
        with self.lock:
            self._received[operation] += 1

    def record_account(self, agency_code: str) -> None:
        with self.lock:
            self._by_account[agency_code] += 1

    def record_throttled(self, operation: str) -> None:
        with self.lock:
            self._throttled[operation] += 1

    # --- helpers ---------------------------------------------------------------------------------

    def _parse_accounts(self, accounts: object) -> list[Account]:
        if not isinstance(accounts, (list, tuple)):
            raise ConfigError("accounts must be a list")
        keys = self.credential_keys
        parsed = []
        for item in accounts:
            _require(isinstance(item, dict), "each account must be an object")
            credentials = item.get("credentials")
            # Raised here rather than through _require, so the checks narrow the types below.
            if not (
                isinstance(credentials, dict)
                and all(isinstance(credentials.get(key), str) and credentials[key] for key in keys)
            ):
                raise ConfigError(f"{self.code} credentials need non-empty strings {list(keys)}")
            agency_code = item.get("agency_code")
            if not (isinstance(agency_code, str) and agency_code != ""):
                raise ConfigError("agency_code must be a non-empty string")
            rate, burst = item.get("rate_per_second"), item.get("burst")
            _require(rate is None or (_is_number(rate) and rate > 0), "rate_per_second must be a number > 0")
            _require(
                burst is None or (isinstance(burst, int) and not isinstance(burst, bool) and burst >= 1),
                "burst must be an integer >= 1",
            )
            parsed.append(Account(agency_code, {key: credentials[key] for key in keys}, rate, burst))
        return parsed

    def _install_accounts(self, accounts: Iterable[Account]) -> None:
        identity_key = self.credential_keys[0]
        for account in accounts:
            identity = account.credentials[identity_key]
            self._accounts[identity] = account
            self._buckets.pop(identity, None)
