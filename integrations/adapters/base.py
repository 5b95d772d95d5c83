"""The common interface every insurer adapter implements.

An adapter describes one insurer: how each operation's request looks, how to read its answers,
and a table from its raw error codes to the taxonomy. It never retries, never sleeps and never
classifies by itself: the channel translates, the retry engine decides.
"""

from __future__ import annotations

import json
import re
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping
from datetime import UTC, date, datetime
from decimal import Decimal, InvalidOperation
from typing import Any, ClassVar
from urllib.parse import quote

from insurehub.masking import mask_and_cut
from integrations.answers.results import (
    MAX_PREMIUM,
    Address,
    Cancellation,
    Document,
    ListedPolicy,
    Policy,
    PolicyListing,
    Quote,
)
from integrations.answers.taxonomy import ErrorKind, Refusal
from integrations.calling.channel import Channel, Reply

# What an answer without an insurer code of its own means, by HTTP status.
GENERIC_STATUS_KINDS: dict[int, ErrorKind] = {
    400: ErrorKind.VALIDATION,
    401: ErrorKind.AUTH,
    403: ErrorKind.NOT_ALLOWED,
    404: ErrorKind.NOT_FOUND,
    408: ErrorKind.TIMEOUT,
    429: ErrorKind.THROTTLED,
}


def status_refusal(reply: Reply, message: str = "") -> Refusal:
    """A refusal for an answer that carries no insurer code: an HTML gateway page, an empty body."""
    kind = GENERIC_STATUS_KINDS.get(reply.status)
    if kind is None and reply.status >= 500:
        kind = ErrorKind.UNAVAILABLE
    if not message:
        message = "empty body" if not reply.content else f"unexpected {reply.content_type or 'body'}"
    return Refusal(str(reply.status), message, kind=kind)


def json_body(reply: Reply) -> Any:
    """Parse a JSON body, or explain (as a `Refusal`) why this answer is not one."""
    if not reply.content.strip():
        raise (
            status_refusal(reply, "empty body")
            if reply.status >= 300
            else Refusal("EMPTY_BODY", "empty body where an answer was expected")
        )
    try:
        return json.loads(reply.content)
    except ValueError:
        if reply.status >= 300:
            raise status_refusal(reply) from None
        raise Refusal("MALFORMED_BODY", f"not JSON ({reply.content_type or 'no content type'})") from None


def parse_money(value: Any) -> Decimal:
    """Money arrives as a decimal string; a float or garbage is a malformed answer, not a price."""
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise ValueError(f"premium is not a decimal string: {value!r}")
    try:
        amount = Decimal(str(value))
    except InvalidOperation as exc:
        raise ValueError(f"premium is not a decimal: {value!r}") from exc
    if not amount.is_finite() or not Decimal(0) <= amount < MAX_PREMIUM:
        raise ValueError(mask_and_cut(f"premium out of range: {value!r}", 200))
    return amount.quantize(Decimal("0.01"))


def text(value: Any) -> str:
    """A text field of an answer. null, an object or a list is a malformed answer, never the text 'None'."""
    if isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    raise ValueError(f"expected text, got {type(value).__name__}")


def parse_utc(value: Any) -> datetime:
    if not isinstance(value, str):
        raise ValueError(f"timestamp is not a string: {value!r}")
    parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.astimezone(UTC)


# The forms a policy period's dates arrive in (CONTRACTS.md, "Policy period"): ISO at Anka,
# Boğaziçi and Deniz, day.month.year at Çınar; the slash form and an ISO timestamp are read too,
# since "handle defensively" covers an insurer that changes its mind.
_DATE_FORMATS = ("%Y-%m-%d", "%d.%m.%Y", "%d/%m/%Y")


def parse_policy_date(value: Any) -> date | None:
    """A policy period date, or None when absent or unreadable.

    Never raises: a period is information about a policy that exists; an unreadable date must
    not turn an issuance that succeeded into a failure (and a re-send into a second policy).
    """
    if not isinstance(value, str) or not value.strip():
        return None
    raw = value.strip()
    if len(raw) == 10 and raw[4] == "-":
        # The common ISO form, without strptime's cost on every status answer; anything
        # fromisoformat reads here, the forms below would have read the same.
        try:
            return date.fromisoformat(raw)
        except ValueError:
            pass
    for fmt in _DATE_FORMATS:
        try:
            return datetime.strptime(raw, fmt).date()
        except ValueError:
            continue
    try:
        return datetime.fromisoformat(raw.replace("Z", "+00:00")).date()
    except ValueError:
        return None


# --- quote and issuance terms (CONTRACTS.md, "Policy start", "Installments", "Kasko options") ---
# Optional: sent only when the platform's data carries them, so an insurer applies its own
# default (tomorrow, peşin, no option) otherwise; never sent as null, except where null is itself
# a choice (`liability_limit`: unlimited İMM).
QUOTE_TERM_FIELDS = ("starts_on",)
ISSUE_TERM_FIELDS = ("starts_on", "installments")
NULL_IS_A_CHOICE = frozenset({"liability_limit"})


def chosen_terms(data: Mapping[str, Any], names: Iterable[str]) -> dict[str, Any]:
    """The optional terms among `names` that `data` carries, as the platform holds them. A missing
    or empty one is left out; None only where None is a choice (`NULL_IS_A_CHOICE`)."""
    terms = {}
    for name in names:
        if name not in data or data[name] == "":
            continue
        if data[name] is None and name not in NULL_IS_A_CHOICE:
            continue
        terms[name] = data[name]
    return terms


def _as_given(value: Any) -> Any:
    """A value no wire form fits, sent as it is (text if JSON cannot carry it) for the insurer to refuse."""
    return value if value is None or isinstance(value, str | int | float | bool) else str(value)


def wire_amount(value: Any) -> Any:
    """A TRY amount as a decimal string with two places ("5000.00"), as the contract writes money."""
    if isinstance(value, bool):
        return _as_given(value)
    if isinstance(value, int | float | Decimal | str):
        try:
            amount = Decimal(str(value).strip())
        except InvalidOperation:
            return _as_given(value)
        if amount.is_finite():
            return str(amount.quantize(Decimal("0.01")))
    return _as_given(value)


def wire_count(value: Any) -> Any:
    """A count (days, installments) as an integer; a digit string becomes one."""
    if isinstance(value, str) and value.strip().isascii() and value.strip().isdigit():
        return int(value.strip())
    return _as_given(value)


def wire_terms(data: Mapping[str, Any], names: Iterable[str], *, date_format: str = "%Y-%m-%d") -> dict[str, Any]:
    """The chosen terms among `names`, each in its wire form (dates in `date_format`, amounts as
    decimal strings, counts as integers), still under the platform's names: an adapter renames
    them and translates words (a repair shop's) into its insurer's."""
    forms: dict[str, Any] = {
        "starts_on": lambda value: wire_date(value, date_format),
        "installments": wire_count,
        "replacement_car_days": wire_count,
        "deductible": wire_amount,
        "liability_limit": wire_amount,
    }
    return {name: forms.get(name, _as_given)(value) for name, value in chosen_terms(data, names).items()}


class InsurerAdapter(ABC):
    code: ClassVar[str]
    name: ClassVar[str]
    products: ClassVar[tuple[str, ...]] = ("trafik", "kasko", "dask")
    credential_fields: ClassVar[tuple[str, ...]]
    # The first credential field names the account (rate state of an ad-hoc endpoint is keyed by
    # it); when that field is itself the secret (an API key), only its last four characters do.
    identifying_credential_is_secret: ClassVar[bool] = False
    error_table: ClassVar[Mapping[str, ErrorKind]]
    # What this insurer's contract says about itself that a retry policy must respect, per
    # operation (e.g. Boğaziçi's issuance settling time); admins may still override it.
    policy_defaults: ClassVar[Mapping[str, Mapping[str, float]]] = {}
    # Does the insurer recognise our issuance reference and answer a repeat with the first
    # send's outcome? Then re-sending under it is a lookup, not a retry; if not, a re-send waits
    # out the settling time and is a budgeted retry. Every adapter must say (the registry checks).
    issuance_deduplicated: ClassVar[bool]

    @classmethod
    def forget_process_state(cls) -> None:
        """Drop what this process keeps between calls to the insurer (a cached token): after a
        sandbox reset or a rotated secret. Most insurers keep nothing."""
        return None

    def __init__(self, *, channel: Channel, credentials: Mapping[str, str]) -> None:
        missing = [f for f in self.credential_fields if not credentials.get(f)]
        if missing:
            raise ValueError(f"{self.code} credentials need {', '.join(missing)}")
        self.channel = channel
        self.credentials = dict(credentials)
        # Every credential value, whatever the insurer calls it: an answer that echoes the
        # request must not carry one into the attempt log (the channel scrubs them out).
        channel.keep_secret(*self.credentials.values())
        # The production list's pages read so far: the engine runs one adapter per operation,
        # so a retry after a failed page reads that page again, not the list.
        self.list_pages = ListPages()

    @abstractmethod
    def trafik_quote(self, data: Mapping[str, Any]) -> Quote: ...

    @abstractmethod
    def kasko_quote(self, data: Mapping[str, Any]) -> Quote: ...

    @abstractmethod
    def dask_address(self, data: Mapping[str, Any]) -> Address: ...

    @abstractmethod
    def dask_quote(self, data: Mapping[str, Any]) -> Quote: ...

    @abstractmethod
    def issue_policy(self, data: Mapping[str, Any], *, reference: str) -> Policy:
        """Issue the quote `data["quote_no"]`, carrying `reference` wherever the insurer accepts one."""

    @abstractmethod
    def policy_status(self, data: Mapping[str, Any]) -> Policy: ...

    @abstractmethod
    def policy_document(self, data: Mapping[str, Any]) -> Document:
        """The PDF of policy `data["policy_no"]`. "Not ready yet" is a `Refusal` whose code the
        adapter's table maps to `ErrorKind.NOT_READY`, with the insurer's wait when it gives one."""

    @abstractmethod
    def find_issued_policy(self, data: Mapping[str, Any], *, reference: str) -> Policy | None:
        """Ask the insurer whether an earlier, unanswered issuance went through.

        Called before any re-send after an ambiguous failure; None means "not issued" (final
        only after the policy's settling time). An insurer that deduplicates by our reference
        and has no lookup answers None without a call: re-sending is then itself the question.
        No default, so that a new adapter has to say which it is.
        """

    @abstractmethod
    def cancel_policy(self, data: Mapping[str, Any], *, reference: str) -> Cancellation:
        """Cancel policy `data["policy_no"]` for `data["reason"]` from `data["effective_on"]`,
        carrying `reference` wherever the insurer accepts one. An "already cancelled" answer is
        the same result as a success (CONTRACTS.md: a repeat carries the first result)."""

    @abstractmethod
    def policy_list(self, data: Mapping[str, Any]) -> PolicyListing:
        """Every policy the account issued from `data["issued_from"]` to `data["issued_to"]`,
        every page in order, each page one exchange through `self.list_pages` (which keeps the
        pages read, so a retry reads the failed page again, not the list). An unreadable item
        fails its page as a malformed answer; it is never dropped."""

    def run(
        self, operation: str, data: Mapping[str, Any], *, reference: str = ""
    ) -> Quote | Address | Policy | Document | Cancellation | PolicyListing:
        if operation == "issue_policy":
            return self.issue_policy(data, reference=reference)
        if operation == "cancel_policy":
            return self.cancel_policy(data, reference=reference)
        return getattr(self, operation)(data)


class ListPages:
    """The pages of one production list read so far, kept by the adapter across the engine's
    attempts of one operation: a throttle or a failure on page n retries page n, not page 1.

    `read(fetch)` calls `fetch(position)` for each page, where `position` is what the insurer
    pages by (a 1-based number, or Deniz's cursor; `None` for the first page), and `fetch`
    returns `(items, next_position)` with `next_position` None after the last page. A policy
    seen on an earlier page is not listed twice (a list that shifts while it is read, as newly
    issued policies push older ones down, repeats an item across pages).
    """

    def __init__(self) -> None:
        self._key: tuple[Any, ...] | None = None
        self._items: list[ListedPolicy] = []
        self._position: Any = None
        self._done = False

    def read(self, key: tuple[Any, ...], fetch: Any, *, first: Any = None) -> PolicyListing:
        if key != self._key:
            self._key, self._items, self._position, self._done = key, [], first, False
        while not self._done:
            items, following = fetch(self._position)
            self._items.extend(items)  # only once the page was read whole
            self._position, self._done = following, following is None
        seen: set[str] = set()
        unique = []
        for item in self._items:
            if item.policy_no not in seen:
                seen.add(item.policy_no)
                unique.append(item)
        return PolicyListing(policies=tuple(unique))


# --- cancellation and the production list (CONTRACTS.md, the last two sections) ------------------

_ISO_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


def platform_date(value: Any) -> date | None:
    """A date as the platform holds it (`effective_on`, `issued_from`): a `date` or its ISO text;
    None for anything else."""
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    if isinstance(value, str) and _ISO_DATE.fullmatch(value.strip()):
        try:
            return date.fromisoformat(value.strip())
        except ValueError:
            return None
    return None


def wire_date(value: Any, fmt: str = "%Y-%m-%d") -> Any:
    """A platform date as the insurer writes it (ISO, or Çınar's `%d.%m.%Y`). A value that is no
    date is sent as given, for the insurer to refuse: the probe shows what the insurer says."""
    parsed = platform_date(value)
    return parsed.strftime(fmt) if parsed is not None else _as_given(value)


def wire_word(words: Mapping[str, str], value: Any) -> Any:
    """The insurer's word for a platform word (a cancellation reason); anything else as given."""
    return words.get(value, value) if isinstance(value, str) else value


def parse_answer_date(value: Any) -> date:
    """A date the answer must carry (the day a cancellation takes effect): unreadable is malformed."""
    parsed = parse_policy_date(value)
    if parsed is None:
        raise ValueError(mask_and_cut(f"not a date: {value!r}", 200))
    return parsed


def parse_listed_date(value: Any) -> date | None:
    """A listed policy's period date: absent is None; present but unreadable is a malformed item
    (a production list is for reconciling, and an item read half is not silently kept)."""
    if value is None or value == "":
        return None
    return parse_answer_date(value)


def pick(data: Mapping[str, Any], *keys: str) -> dict[str, Any]:
    """The named platform fields; a missing one is sent as null for the insurer to refuse.

    Validation of what agents type happens before fan-out (the quote desk); the probe sends
    what it is given, so what the insurer says about bad input can be seen and classified.
    """
    return {key: data.get(key) for key in keys}


def path_part(value: Any) -> str:
    """A value placed in a URL path, escaped so no input can change which resource is asked for."""
    return quote("" if value is None else str(value), safe="")
