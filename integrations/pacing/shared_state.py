"""Where the shared send-rate and retry-budget state lives: the database, or Redis.

Every worker process on every machine reads and writes the same state, so one agency's
throttling is seen by all its workers at once and the retry budget is one budget per insurer.
The embedded default keeps it in the database (short IMMEDIATE transactions on SQLite, row
locks on PostgreSQL); with `REDIS_URL` set it lives in Redis, updated by Lua scripts so each
step is atomic and uses Redis's clock, not the worker's.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any, Protocol

from django.conf import settings
from django.db import connection

from integrations.pacing.arithmetic import (
    BUDGET_BUCKET_SECONDS,
    BUDGET_WINDOW_SECONDS,
    RETRY_BUDGET_REFILL_PER_SECOND,
    RETRY_BUDGET_RESERVE,
    RETRY_COST,
    TOKEN_TOLERANCE,
    WINDOW_RATE_SECONDS,
    RateState,
    Window,
    budget_tokens_after,
    gcra_reserve,
)


class SharedState(Protocol):
    def reserve_send_slot(
        self, key: str, *, initial_rate: float, ceiling: float, max_wait: float | None, burst: int = 1
    ) -> float:
        """Reserve the account's next send slot; returns the wait before sending (not reserved if > max_wait)."""

    def reserve_counted(
        self, key: str, *, initial_rate: float, ceiling: float, max_wait: float | None, burst: int = 1
    ) -> tuple[float, tuple[RateState, Window] | None]:
        """`reserve_send_slot`, and a slot taken is also counted as an attempt of the window (one
        step instead of two on the hot path); the caller that closes the window also gets
        (current rate state, closed window). A slot not taken is not counted."""

    def record_outcome(self, key: str, *, throttled: bool, counted: bool = False) -> tuple[RateState, Window] | None:
        """Count one attempt (`counted`: already counted when its slot was taken, so only a
        throttle is added); the caller that closes the window gets (current rate state, closed window)."""

    def set_rate(self, key: str, state: RateState) -> None: ...

    def current_rate(self, key: str) -> float | None: ...

    def budget_record_first(self, insurer_code: str, *, ok: bool, ratio: float, times: int = 1) -> None:
        """Count `times` first attempts; each successful one deposits `ratio` of a token."""

    def budget_try_spend(self, insurer_code: str) -> bool:
        """Take one token for a retry if there is one (after the refill); else count a denial."""

    def budget_refund(self, insurer_code: str) -> None:
        """A retry succeeded: its token goes back."""

    def budget_tokens(self, insurer_code: str) -> float:
        """The tokens left now, refill included."""

    def budget_snapshot(self, insurer_code: str) -> dict[str, int]:
        """The counters over the last BUDGET_WINDOW_SECONDS: first_successes, first_failures,
        retries, retry_successes, denied, local_refusals."""

    def count_local_refusal(self, insurer_code: str) -> None:
        """A call of this insurer's was refused on our side (its send slot beyond its deadline):
        counted beside the budget's counters, for the same minute, on the dashboard and /metrics."""


class DatabaseSharedState:
    # One statement each, atomic on its own (no explicit transaction, no read-then-write), so the
    # per-call cost stays low on SQLite and no lock is held between a read and a write.
    # The slot arithmetic mirrors arithmetic.gcra_reserve; RETURNING needs SQLite >= 3.35.
    _RESERVE_SQL = (
        "UPDATE integrations_sendratestate SET rate = {least}(rate, %s), "
        "tat = {greatest}(tat, {now}) + 1.0 / {least}(rate, %s) "
        "WHERE account_key = %s AND (%s OR {greatest}(tat, {now}) - %s / {least}(rate, %s) - {now} <= %s) "
        "RETURNING tat, rate, {now}"
    )
    # The same slot, and the attempt counted in the window, in one statement (the hot path).
    _RESERVE_COUNTED_SQL = _RESERVE_SQL.replace(
        "tat = {greatest}", "window_attempts = window_attempts + 1, tat = {greatest}"
    ).replace(
        "RETURNING tat, rate, {now}",
        "RETURNING tat, rate, {now}, window_attempts, window_throttled, window_started, known_good, good_before_cut",
    )
    _COUNT_SQL = (
        "UPDATE integrations_sendratestate SET window_attempts = window_attempts + %s, "
        "window_throttled = window_throttled + %s WHERE account_key = %s "
        "RETURNING window_attempts, window_throttled, window_started, rate, known_good, good_before_cut"
    )
    _CLOSE_SQL = (
        "UPDATE integrations_sendratestate SET window_attempts = 0, window_throttled = 0, window_started = %s "
        "WHERE account_key = %s AND window_started = %s"
    )

    # The retry budget's token bucket, one row per insurer: refill, then the change, capped —
    # arithmetic.budget_tokens_after, term for term. An upsert, so the first call for an insurer
    # creates its (full) bucket in the same statement. A spend that would leave less than
    # -TOKEN_TOLERANCE matches no row and returns nothing: refused, the row left as it was (the
    # refill is reckoned from `updated_at` next time, which comes to the same). `updated_at` never
    # moves back, so a worker whose clock lags cannot be refilled twice for the same seconds.
    _TOKENS_SQL = (
        "INSERT INTO integrations_retrybudgetstate AS b (insurer_code, tokens, updated_at) VALUES (%s, %s, {{now}}) "
        "ON CONFLICT (insurer_code) DO UPDATE SET "
        "tokens = {{least}}(%s, {{least}}(%s, b.tokens + {{greatest}}({{now}} - b.updated_at, 0.0) * %s) + %s), "
        "updated_at = {{greatest}}(b.updated_at, {{now}}) "
        "{where}RETURNING tokens"
    )
    _SPEND_WHERE = "WHERE {least}(%s, {least}(%s, b.tokens + {greatest}({now} - b.updated_at, 0.0) * %s) + %s) >= %s "
    _READ_TOKENS_SQL = (
        "SELECT {least}(%s, tokens + {greatest}({now} - updated_at, 0.0) * %s) "
        "FROM integrations_retrybudgetstate WHERE insurer_code = %s"
    )
    # The counters the dashboard and /metrics show, one row per insurer and short bucket.
    _BUDGET_COUNTERS = ("first_successes", "first_failures", "retries", "retry_successes", "denied", "local_refusals")
    _COUNT_BUDGET_SQL = (
        "INSERT INTO integrations_retrybudgetbucket AS c (insurer_code, bucket, "
        "first_successes, first_failures, retries, retry_successes, denied, local_refusals) "
        "VALUES (%s, %s, %s, %s, %s, %s, %s, %s) "
        "ON CONFLICT (insurer_code, bucket) DO UPDATE SET {field} = c.{field} + %s"
    )

    def __init__(
        self,
        *,
        budget_reserve: float = RETRY_BUDGET_RESERVE,
        budget_refill: float = RETRY_BUDGET_REFILL_PER_SECOND,
        clock: Callable[[], float] = time.time,
    ) -> None:
        """`clock` is the worker's, used where the database does not read its own (SQLite)."""
        self._budget_reserve = budget_reserve
        self._budget_refill = budget_refill
        self._clock = clock

    @staticmethod
    def _sql(template: str) -> tuple[str, bool]:
        """The statement for this database, and whether `now` is passed in (SQLite) or read by
        the database itself when it takes the row (PostgreSQL: one clock for every machine, and
        a caller that waited for the row lock is not handed a slot reckoned from before it)."""
        if connection.vendor == "sqlite":
            return template.format(least="MIN", greatest="MAX", now="%s"), True
        now = "EXTRACT(EPOCH FROM clock_timestamp())::float8"
        return template.format(least="LEAST", greatest="GREATEST", now=now), False

    def reserve_send_slot(
        self, key: str, *, initial_rate: float, ceiling: float, max_wait: float | None, burst: int = 1
    ) -> float:
        return self._reserve(
            key, initial_rate=initial_rate, ceiling=ceiling, max_wait=max_wait, burst=burst, counted=False
        )[0]

    def reserve_counted(
        self, key: str, *, initial_rate: float, ceiling: float, max_wait: float | None, burst: int = 1
    ) -> tuple[float, tuple[RateState, Window] | None]:
        return self._reserve(
            key, initial_rate=initial_rate, ceiling=ceiling, max_wait=max_wait, burst=burst, counted=True
        )

    def _reserve(
        self, key: str, *, initial_rate: float, ceiling: float, max_wait: float | None, burst: int, counted: bool
    ) -> tuple[float, tuple[RateState, Window] | None]:
        from integrations.models import SendRateState

        now = self._clock()
        unbounded = max_wait is None
        limit = 0.0 if max_wait is None else max_wait
        sql, now_is_param = self._sql(self._RESERVE_COUNTED_SQL if counted else self._RESERVE_SQL)
        clock = [now] if now_is_param else []
        tolerance = max(burst, 1) - 1  # slots that may go early: GCRA's tau, in units of 1/rate
        params: list[float | str | bool] = [
            ceiling,
            *clock,
            ceiling,
            key,
            unbounded,
            *clock,
            tolerance,
            ceiling,
            *clock,
            limit,
            *clock,
        ]
        with connection.cursor() as cursor:
            # Three rounds at most: the row may be created, or move on, between two statements.
            for _ in range(3):
                cursor.execute(sql, params)
                reserved = cursor.fetchone()
                if reserved is not None:
                    break
                row = SendRateState.objects.filter(account_key=key).values_list("tat", "rate").first()
                if row is None:
                    SendRateState.objects.bulk_create(
                        [
                            SendRateState(
                                account_key=key, rate=initial_rate, known_good=initial_rate, window_started=now
                            )
                        ],
                        ignore_conflicts=True,
                    )
                elif not unbounded:
                    wait, _ = gcra_reserve(row[0], now=now, rate=min(row[1], ceiling), burst=burst)
                    if wait > limit:
                        return wait, None  # further away than this caller can wait: not taken
            else:
                # The state kept moving under us (or the database's clock and ours disagree at
                # the boundary): no slot was taken, so the call must not go. Report a wait just
                # past what the caller can take; an unbounded caller always matches a live row.
                return limit + 0.001, None
            closed = None
            if counted:
                _, rate, reserved_at, attempts, throttled_count, started, known_good, before_cut = reserved
                closed = self._close_window(
                    cursor, key, reserved_at, attempts, throttled_count, started, rate, known_good, before_cut
                )
        tat, rate, reserved_at = reserved[:3]
        # The slot starts 1/rate before the new TAT; the tolerance lets it go that much earlier.
        return max(tat - (1.0 + tolerance) / rate - reserved_at, 0.0), closed

    def _close_window(
        self,
        cursor: Any,
        key: str,
        now: float,
        attempts: int,
        throttled_count: int,
        started: float,
        rate: float,
        known_good: float,
        good_before_cut: float,
    ) -> tuple[RateState, Window] | None:
        """Close the window if it is complete; only the caller whose reset lands gets it."""
        window = Window(attempts=attempts, throttled=throttled_count, seconds=now - started)
        if not window.is_closed(rate):
            return None
        cursor.execute(self._CLOSE_SQL, [now, key, started])
        if cursor.rowcount != 1:
            return None
        return RateState(rate=rate, known_good=known_good or rate, good_before_cut=good_before_cut or 0.0), window

    def record_outcome(self, key: str, *, throttled: bool, counted: bool = False) -> tuple[RateState, Window] | None:
        now = self._clock()
        with connection.cursor() as cursor:
            cursor.execute(self._COUNT_SQL, [0 if counted else 1, int(throttled), key])
            row = cursor.fetchone()
            if row is None:
                return None
            attempts, throttled_count, started, rate, known_good, before_cut = row
            # Only the caller whose reset lands closes the window: exactly one adjusts the rate.
            return self._close_window(
                cursor, key, now, attempts, throttled_count, started, rate, known_good, before_cut
            )

    def set_rate(self, key: str, state: RateState) -> None:
        from integrations.models import SendRateState

        SendRateState.objects.filter(account_key=key).update(
            rate=state.rate, known_good=state.known_good, good_before_cut=state.good_before_cut
        )

    def current_rate(self, key: str) -> float | None:
        from integrations.models import SendRateState

        return SendRateState.objects.filter(account_key=key).values_list("rate", flat=True).first()

    def _bucket(self) -> int:
        return int(self._clock() // BUDGET_BUCKET_SECONDS)

    def _clock_param(self, now_is_param: bool) -> list[float]:
        return [self._clock()] if now_is_param else []

    def _budget_step(self, insurer_code: str, *, change: float, spend: bool) -> bool:
        """Refill, then deposit, refund or spend, in one statement; False if a spend was refused."""
        sql, now_is_param = self._sql(self._TOKENS_SQL.format(where=self._SPEND_WHERE if spend else ""))
        now = self._clock_param(now_is_param)
        arithmetic = [self._budget_reserve, self._budget_reserve, *now, self._budget_refill, change]
        # A never-seen insurer starts with a full bucket.
        fresh = budget_tokens_after(
            self._budget_reserve, 0.0, change=change, refill=self._budget_refill, capacity=self._budget_reserve
        )
        params: list[float | str] = [
            insurer_code,
            fresh,
            *now,
            *arithmetic,
            *now,
            *([*arithmetic, -TOKEN_TOLERANCE] if spend else []),
        ]
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            return cursor.fetchone() is not None

    def _count(self, insurer_code: str, field: str, times: int = 1) -> None:
        bucket = self._bucket()
        with connection.cursor() as cursor:
            cursor.execute(
                self._COUNT_BUDGET_SQL.format(field=field),
                [insurer_code, bucket, *(times if name == field else 0 for name in self._BUDGET_COUNTERS), times],
            )

    def budget_record_first(self, insurer_code: str, *, ok: bool, ratio: float, times: int = 1) -> None:
        if times <= 0:
            return
        if ok and ratio > 0:
            # Deposits only add, and the cap absorbs: n deposits at once leave what n in a row would.
            self._budget_step(insurer_code, change=ratio * times, spend=False)
        self._count(insurer_code, "first_successes" if ok else "first_failures", times)

    def budget_try_spend(self, insurer_code: str) -> bool:
        allowed = self._budget_step(insurer_code, change=-RETRY_COST, spend=True)
        self._count(insurer_code, "retries" if allowed else "denied")
        return allowed

    def budget_refund(self, insurer_code: str) -> None:
        self._budget_step(insurer_code, change=RETRY_COST, spend=False)
        self._count(insurer_code, "retry_successes")

    def count_local_refusal(self, insurer_code: str) -> None:
        self._count(insurer_code, "local_refusals")

    def budget_tokens(self, insurer_code: str) -> float:
        sql, now_is_param = self._sql(self._READ_TOKENS_SQL)
        params: list[float | str] = [
            self._budget_reserve,
            *self._clock_param(now_is_param),
            self._budget_refill,
            insurer_code,
        ]
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            row = cursor.fetchone()
        return self._budget_reserve if row is None else row[0]

    def _window(self, insurer_code: str):
        from integrations.models import RetryBudgetBucket

        oldest = self._bucket() - BUDGET_WINDOW_SECONDS // BUDGET_BUCKET_SECONDS + 1
        return RetryBudgetBucket.objects.filter(insurer_code=insurer_code, bucket__gte=oldest)

    def budget_snapshot(self, insurer_code: str) -> dict[str, int]:
        from django.db.models import Sum

        totals = self._window(insurer_code).aggregate(**{name: Sum(name) for name in self._BUDGET_COUNTERS})
        return {k: v or 0 for k, v in totals.items()}


# Redis: each script is one atomic step, timed by Redis's own clock (`_REDIS_NOW`, kept apart
# from each body so a test can run the same body at a time it sets).
# One send slot (mirrors arithmetic.gcra_reserve). KEYS[1]: the account's rate state; ARGV:
# initial rate, ceiling, the longest wait taken (-1: any), burst.
# Numbers are written with 17 significant digits: Lua's tostring keeps 14, a tenth of a
# millisecond at today's epoch, enough to flip "wait > max_wait" at the boundary and make the
# shared slot differ from `gcra_reserve`'s (tests/integrations/pacing/test_equivalence.py).
_RESERVE_STEP = """
local rate = tonumber(redis.call('HGET', KEYS[1], 'rate') or ARGV[1])
local ceiling = tonumber(ARGV[2])
if rate > ceiling then rate = ceiling end
local tat = tonumber(redis.call('HGET', KEYS[1], 'tat') or '0')
local start = math.max(tat, now)
local wait = start - (tonumber(ARGV[4]) - 1) / rate - now
if wait < 0 then wait = 0 end
local max_wait = tonumber(ARGV[3])
if max_wait >= 0 and wait > max_wait then return string.format('%.17g', wait) end
if not redis.call('HGET', KEYS[1], 'wstart') then redis.call('HSET', KEYS[1], 'wstart', tostring(now)) end
redis.call('HSET', KEYS[1], 'tat', string.format('%.17g', start + 1 / rate), 'rate', string.format('%.17g', rate))
redis.call('EXPIRE', KEYS[1], 86400)
return string.format('%.17g', wait)
"""

# One answer counted in the account's window; closes it when full (mirrors Window.is_closed).
# ARGV: throttled (0/1), WINDOW_ATTEMPTS, WINDOW_MAX_SECONDS, WINDOW_MIN_ATTEMPTS, attempts to
# add (0: counted with its slot), WINDOW_RATE_SECONDS.
_RECORD = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
if redis.call('EXISTS', KEYS[1]) == 0 then return false end
local attempts = redis.call('HINCRBY', KEYS[1], 'wattempts', tonumber(ARGV[5] or '1'))
local throttled = redis.call('HINCRBY', KEYS[1], 'wthrottled', tonumber(ARGV[1]))
local started = tonumber(redis.call('HGET', KEYS[1], 'wstart') or tostring(now))
local seconds = now - started
local current = tonumber(redis.call('HGET', KEYS[1], 'rate') or '0')
local enough = math.max(tonumber(ARGV[2]), math.floor(current * tonumber(ARGV[6])))
if attempts >= enough or (seconds >= tonumber(ARGV[3]) and attempts >= tonumber(ARGV[4])) then
  redis.call('HSET', KEYS[1], 'wattempts', 0, 'wthrottled', 0, 'wstart', tostring(now))
  local rate = redis.call('HGET', KEYS[1], 'rate')
  local good = redis.call('HGET', KEYS[1], 'good') or rate
  local before_cut = redis.call('HGET', KEYS[1], 'gbc') or '0'
  return {rate, good, attempts, throttled, tostring(seconds), before_cut}
end
return false
"""

# The clock every Redis script reads: Redis's own, one for every machine.
_REDIS_NOW = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
"""

_RESERVE = _REDIS_NOW + _RESERVE_STEP

# Every script names each key it touches in KEYS (Redis Cluster routes a script by its keys, and
# refuses one whose keys live in different slots): a script's keys share a hash tag, `{<insurer>}`.
# So the retry budget's per-bucket counters are fields of one hash (`<bucket>:<counter>`), not a
# key per bucket built inside the script, and a step forgets the buckets that left the window.
# One retry-budget step. KEYS[1]: the insurer's counters; KEYS[2]: its token bucket.
# ARGV: bucket seconds, buckets in the window, counter to add to, change ('' for none), capacity,
# refill per second, for a spend the lowest result it may leave ('' otherwise), and how many to
# count (1 when absent). The token
# arithmetic mirrors arithmetic.budget_tokens_after; a refused spend leaves the bucket as it was
# and counts a denial. Floats are stored with 17 digits: a token count survives the round trip.
_BUDGET_STEP = """
local seconds, buckets, field = tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3]
local times = tonumber(ARGV[8] or '1')
local allowed = 1
if ARGV[4] ~= '' then
  local change, capacity, refill = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
  local tokens = tonumber(redis.call('HGET', KEYS[2], 'tokens') or ARGV[5])
  local at = redis.call('HGET', KEYS[2], 'at')
  at = at and tonumber(at) or now
  local refilled = math.min(capacity, tokens + math.max(now - at, 0) * refill)
  local after = math.min(capacity, refilled + change)
  if ARGV[7] ~= '' and after < tonumber(ARGV[7]) then
    allowed, field, times = 0, 'denied', 1
  else
    local kept = string.format('%.17g', after)
    redis.call('HSET', KEYS[2], 'tokens', kept, 'at', string.format('%.17g', math.max(at, now)))
    redis.call('EXPIRE', KEYS[2], 86400)
  end
end
local bucket = math.floor(now / seconds)
redis.call('HINCRBY', KEYS[1], bucket .. ':' .. field, times)
local before = bucket - buckets
local forgot = redis.call('HGET', KEYS[1], 'forgot')
if not forgot then
  redis.call('HSET', KEYS[1], 'forgot', before)
elseif tonumber(forgot) < before then
  -- Older than twice the window the whole hash would have expired: no further back than that.
  for b = math.max(tonumber(forgot) + 1, before - buckets * 2), before do
    redis.call('HDEL', KEYS[1], b .. ':ok', b .. ':failed', b .. ':retries', b .. ':rok', b .. ':denied', b .. ':local')
  end
  redis.call('HSET', KEYS[1], 'forgot', before)
end
redis.call('EXPIRE', KEYS[1], seconds * buckets * 2)
return allowed
"""

_BUDGET = _REDIS_NOW + _BUDGET_STEP

# The tokens left now: KEYS[1] the bucket; ARGV capacity, refill per second.
_TOKENS_READ = """
local tokens = redis.call('HGET', KEYS[1], 'tokens')
if not tokens then return ARGV[1] end
local at = tonumber(redis.call('HGET', KEYS[1], 'at') or tostring(now))
local refilled = math.min(tonumber(ARGV[1]), tonumber(tokens) + math.max(now - at, 0) * tonumber(ARGV[2]))
return string.format('%.17g', refilled)
"""

_TOKENS = _REDIS_NOW + _TOKENS_READ


class RedisSharedState:
    def __init__(
        self,
        url: str,
        *,
        budget_reserve: float = RETRY_BUDGET_RESERVE,
        budget_refill: float = RETRY_BUDGET_REFILL_PER_SECOND,
    ) -> None:
        import redis

        from integrations.pacing.arithmetic import WINDOW_ATTEMPTS, WINDOW_MAX_SECONDS, WINDOW_MIN_ATTEMPTS

        self._redis = redis.Redis.from_url(url)
        self._reserve = self._redis.register_script(_RESERVE)
        self._record = self._redis.register_script(_RECORD)
        self._budget = self._redis.register_script(_BUDGET)
        self._tokens = self._redis.register_script(_TOKENS)
        self._budget_reserve = budget_reserve
        self._budget_refill = budget_refill
        self._window_args = [WINDOW_ATTEMPTS, WINDOW_MAX_SECONDS, WINDOW_MIN_ATTEMPTS]
        self._buckets = BUDGET_WINDOW_SECONDS // BUDGET_BUCKET_SECONDS

    @staticmethod
    def _rate_key(key: str) -> str:
        return f"insurehub:rate:{key}"

    # The insurer's code as the hash tag: its counters and its token bucket share one Cluster slot.
    @staticmethod
    def _budget_key(insurer_code: str) -> str:
        return f"insurehub:budget:{{{insurer_code}}}"

    @staticmethod
    def _tokens_key(insurer_code: str) -> str:
        return f"insurehub:retrytokens:{{{insurer_code}}}"

    def reserve_send_slot(
        self, key: str, *, initial_rate: float, ceiling: float, max_wait: float | None, burst: int = 1
    ) -> float:
        wait = self._reserve(
            keys=[self._rate_key(key)],
            args=[initial_rate, ceiling, -1 if max_wait is None else max_wait, max(burst, 1)],
        )
        return float(wait)

    def reserve_counted(
        self, key: str, *, initial_rate: float, ceiling: float, max_wait: float | None, burst: int = 1
    ) -> tuple[float, tuple[RateState, Window] | None]:
        """Two scripts here (the slot, then the count): one round trip each, both atomic. The
        window may see the count a moment after the slot, which changes nothing it decides."""
        wait = self.reserve_send_slot(key, initial_rate=initial_rate, ceiling=ceiling, max_wait=max_wait, burst=burst)
        if max_wait is not None and wait > max_wait:
            return wait, None
        return wait, self.record_outcome(key, throttled=False)

    def record_outcome(self, key: str, *, throttled: bool, counted: bool = False) -> tuple[RateState, Window] | None:
        closed = self._record(
            keys=[self._rate_key(key)],
            args=[int(throttled), *self._window_args, 0 if counted else 1, repr(WINDOW_RATE_SECONDS)],
        )
        if not closed:
            return None
        rate, good, attempts, throttled_count, seconds, before_cut = closed
        window = Window(attempts=int(attempts), throttled=int(throttled_count), seconds=float(seconds))
        return RateState(rate=float(rate), known_good=float(good), good_before_cut=float(before_cut)), window

    def set_rate(self, key: str, state: RateState) -> None:
        self._redis.hset(
            self._rate_key(key),
            mapping={"rate": str(state.rate), "good": str(state.known_good), "gbc": str(state.good_before_cut)},
        )

    def current_rate(self, key: str) -> float | None:
        value = self._redis.hget(self._rate_key(key), "rate")
        return float(value) if value is not None else None

    def _budget_step(
        self,
        insurer_code: str,
        field: str,
        *,
        change: float | None = None,
        spend: bool = False,
        times: int = 1,
    ) -> bool:
        keys = [self._budget_key(insurer_code), self._tokens_key(insurer_code)]
        token_args = [
            "" if change is None else repr(change),
            repr(self._budget_reserve),
            repr(self._budget_refill),
            repr(-TOKEN_TOLERANCE) if spend else "",
        ]
        args: list[str | float] = [BUDGET_BUCKET_SECONDS, self._buckets, field, *token_args, times]
        return bool(self._budget(keys=keys, args=args))

    def budget_record_first(self, insurer_code: str, *, ok: bool, ratio: float, times: int = 1) -> None:
        if times <= 0:
            return
        change = ratio * times if ok and ratio > 0 else None
        self._budget_step(insurer_code, "ok" if ok else "failed", change=change, times=times)

    def budget_try_spend(self, insurer_code: str) -> bool:
        return self._budget_step(insurer_code, "retries", change=-RETRY_COST, spend=True)

    def budget_refund(self, insurer_code: str) -> None:
        self._budget_step(insurer_code, "rok", change=RETRY_COST)

    def count_local_refusal(self, insurer_code: str) -> None:
        self._budget_step(insurer_code, "local")

    def budget_tokens(self, insurer_code: str) -> float:
        tokens = self._tokens(
            keys=[self._tokens_key(insurer_code)], args=[repr(self._budget_reserve), repr(self._budget_refill)]
        )
        return float(tokens)

    def budget_snapshot(self, insurer_code: str) -> dict[str, int]:
        now_bucket = int(float(self._redis.time()[0]) // BUDGET_BUCKET_SECONDS)
        names = {
            "ok": "first_successes",
            "failed": "first_failures",
            "retries": "retries",
            "rok": "retry_successes",
            "denied": "denied",
            "local": "local_refusals",
        }
        totals = dict.fromkeys(names.values(), 0)
        fields = [f"{now_bucket - i}:{counter}" for i in range(self._buckets) for counter in names]
        for field, value in zip(fields, self._redis.hmget(self._budget_key(insurer_code), fields), strict=True):
            if value is not None:
                totals[names[field.split(":", 1)[1]]] += int(value)
        return totals


_state: SharedState | None = None
_state_lock = threading.Lock()


def shared_state() -> SharedState:
    """The configured backend: Redis when `REDIS_URL` is set, else the database."""
    global _state
    with _state_lock:
        if _state is None:
            url = getattr(settings, "REDIS_URL", "")
            _state = RedisSharedState(url) if url else DatabaseSharedState()
        return _state
