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
from typing import Protocol

from django.conf import settings
from django.db import connection, transaction

from integrations.ratecontrol import (
    BUDGET_BUCKET_SECONDS,
    BUDGET_MIN_RETRIES,
    BUDGET_WINDOW_SECONDS,
    RateState,
    Window,
    gcra_reserve,
    retry_allowed,
)


class SharedState(Protocol):
    def reserve_send_slot(
        self, key: str, *, initial_rate: float, ceiling: float, max_wait: float | None, burst: int = 1
    ) -> float:
        """Reserve the account's next send slot; returns the wait before sending (not reserved if > max_wait)."""

    def record_outcome(self, key: str, *, throttled: bool) -> tuple[RateState, Window] | None:
        """Count one attempt; the caller that closes the window gets (current rate state, closed window)."""

    def set_rate(self, key: str, state: RateState) -> None: ...

    def current_rate(self, key: str) -> float | None: ...

    def budget_record_first(self, insurer_code: str, *, ok: bool) -> None: ...

    def budget_try_spend(self, insurer_code: str, *, ratio: float) -> bool: ...

    def budget_refund(self, insurer_code: str) -> None: ...

    def budget_snapshot(self, insurer_code: str) -> dict[str, int]: ...


class DatabaseSharedState:
    # One statement each, atomic on its own (no explicit transaction, no read-then-write), so the
    # per-call cost stays low on SQLite and no lock is held between a read and a write.
    # The slot arithmetic mirrors ratecontrol.gcra_reserve; RETURNING needs SQLite >= 3.35.
    _RESERVE_SQL = (
        "UPDATE integrations_sendratestate SET rate = {least}(rate, %s), "
        "tat = {greatest}(tat, {now}) + 1.0 / {least}(rate, %s) "
        "WHERE account_key = %s AND (%s OR {greatest}(tat, {now}) - %s / {least}(rate, %s) - {now} <= %s) "
        "RETURNING tat, rate, {now}"
    )
    _COUNT_SQL = (
        "UPDATE integrations_sendratestate SET window_attempts = window_attempts + 1, "
        "window_throttled = window_throttled + %s WHERE account_key = %s "
        "RETURNING window_attempts, window_throttled, window_started, rate, known_good"
    )
    _CLOSE_SQL = (
        "UPDATE integrations_sendratestate SET window_attempts = 0, window_throttled = 0, window_started = %s "
        "WHERE account_key = %s AND window_started = %s"
    )

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
        from integrations.models import SendRateState

        now = time.time()
        unbounded = max_wait is None
        limit = 0.0 if max_wait is None else max_wait
        sql, now_is_param = self._sql(self._RESERVE_SQL)
        clock = [now] if now_is_param else []
        tolerance = max(burst, 1) - 1  # slots that may go early: GCRA's tau, in units of 1/rate
        params = [ceiling, *clock, ceiling, key, unbounded, *clock, tolerance, ceiling, *clock, limit, *clock]
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
                        return wait  # further away than this caller can wait: not taken
            else:
                return 0.0  # the state kept moving under us: send, the insurer's signal will tell
        tat, rate, reserved_at = reserved
        # The slot starts 1/rate before the new TAT; the tolerance lets it go that much earlier.
        return max(tat - (1.0 + tolerance) / rate - reserved_at, 0.0)

    def record_outcome(self, key: str, *, throttled: bool) -> tuple[RateState, Window] | None:
        now = time.time()
        with connection.cursor() as cursor:
            cursor.execute(self._COUNT_SQL, [int(throttled), key])
            counted = cursor.fetchone()
            if counted is None:
                return None
            attempts, throttled_count, started, rate, known_good = counted
            window = Window(attempts=attempts, throttled=throttled_count, seconds=now - started)
            if not window.is_closed():
                return None
            # Only the caller whose reset lands closes the window: exactly one adjusts the rate.
            cursor.execute(self._CLOSE_SQL, [now, key, started])
            if cursor.rowcount != 1:
                return None
        return RateState(rate=rate, known_good=known_good or rate), window

    def set_rate(self, key: str, state: RateState) -> None:
        from integrations.models import SendRateState

        SendRateState.objects.filter(account_key=key).update(rate=state.rate, known_good=state.known_good)

    def current_rate(self, key: str) -> float | None:
        from integrations.models import SendRateState

        return SendRateState.objects.filter(account_key=key).values_list("rate", flat=True).first()

    def _bucket(self) -> int:
        return int(time.time() // BUDGET_BUCKET_SECONDS)

    def budget_record_first(self, insurer_code: str, *, ok: bool) -> None:
        self._bucket_add(insurer_code, "first_successes" if ok else "first_failures")

    def _bucket_add(self, insurer_code: str, field: str) -> None:
        from django.db.models import F

        from integrations.models import RetryBudgetBucket

        bucket = self._bucket()
        with transaction.atomic():
            updated = RetryBudgetBucket.objects.filter(insurer_code=insurer_code, bucket=bucket).update(
                **{field: F(field) + 1}
            )
            if not updated:
                RetryBudgetBucket.objects.bulk_create(
                    [RetryBudgetBucket(insurer_code=insurer_code, bucket=bucket)], ignore_conflicts=True
                )
                RetryBudgetBucket.objects.filter(insurer_code=insurer_code, bucket=bucket).update(
                    **{field: F(field) + 1}
                )

    def _window(self, insurer_code: str):
        from integrations.models import RetryBudgetBucket

        oldest = self._bucket() - BUDGET_WINDOW_SECONDS // BUDGET_BUCKET_SECONDS + 1
        return RetryBudgetBucket.objects.filter(insurer_code=insurer_code, bucket__gte=oldest)

    def budget_try_spend(self, insurer_code: str, *, ratio: float) -> bool:
        from django.db.models import F, Sum

        from integrations.models import RetryBudgetBucket

        bucket = self._bucket()
        with transaction.atomic():
            RetryBudgetBucket.objects.bulk_create(
                [RetryBudgetBucket(insurer_code=insurer_code, bucket=bucket)], ignore_conflicts=True
            )
            # Lock this insurer's current bucket: concurrent spenders queue here, so the cap is exact.
            list(RetryBudgetBucket.objects.select_for_update().filter(insurer_code=insurer_code, bucket=bucket))
            totals = self._window(insurer_code).aggregate(
                ok=Sum("first_successes"), retries=Sum("retries"), refunded=Sum("retry_successes")
            )
            wasted = (totals["retries"] or 0) - (totals["refunded"] or 0)
            allowed = retry_allowed(retries=wasted, first_successes=totals["ok"] or 0, ratio=ratio)
            field = "retries" if allowed else "denied"
            RetryBudgetBucket.objects.filter(insurer_code=insurer_code, bucket=bucket).update(**{field: F(field) + 1})
        return allowed

    def budget_refund(self, insurer_code: str) -> None:
        self._bucket_add(insurer_code, "retry_successes")

    def budget_snapshot(self, insurer_code: str) -> dict[str, int]:
        from django.db.models import Sum

        totals = self._window(insurer_code).aggregate(
            first_successes=Sum("first_successes"),
            first_failures=Sum("first_failures"),
            retries=Sum("retries"),
            retry_successes=Sum("retry_successes"),
            denied=Sum("denied"),
        )
        return {k: v or 0 for k, v in totals.items()}


# Redis: each script is one atomic step, timed by Redis's own clock.
_RESERVE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local rate = tonumber(redis.call('HGET', KEYS[1], 'rate') or ARGV[1])
local ceiling = tonumber(ARGV[2])
if rate > ceiling then rate = ceiling end
local tat = tonumber(redis.call('HGET', KEYS[1], 'tat') or '0')
local start = math.max(tat, now)
local wait = start - (tonumber(ARGV[4]) - 1) / rate - now
if wait < 0 then wait = 0 end
local max_wait = tonumber(ARGV[3])
if max_wait >= 0 and wait > max_wait then return tostring(wait) end
if not redis.call('HGET', KEYS[1], 'wstart') then redis.call('HSET', KEYS[1], 'wstart', tostring(now)) end
redis.call('HSET', KEYS[1], 'tat', tostring(start + 1 / rate), 'rate', tostring(rate))
redis.call('EXPIRE', KEYS[1], 86400)
return tostring(wait)
"""

_RECORD = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
if redis.call('EXISTS', KEYS[1]) == 0 then return false end
local attempts = redis.call('HINCRBY', KEYS[1], 'wattempts', 1)
local throttled = redis.call('HINCRBY', KEYS[1], 'wthrottled', tonumber(ARGV[1]))
local started = tonumber(redis.call('HGET', KEYS[1], 'wstart') or tostring(now))
local seconds = now - started
if attempts >= tonumber(ARGV[2]) or (seconds >= tonumber(ARGV[3]) and attempts >= tonumber(ARGV[4])) then
  redis.call('HSET', KEYS[1], 'wattempts', 0, 'wthrottled', 0, 'wstart', tostring(now))
  local rate = redis.call('HGET', KEYS[1], 'rate')
  local good = redis.call('HGET', KEYS[1], 'good') or rate
  return {rate, good, attempts, throttled, tostring(seconds)}
end
return false
"""

_SPEND = """
local t = redis.call('TIME')
local bucket = math.floor(tonumber(t[1]) / tonumber(ARGV[1]))
local n = tonumber(ARGV[2])
local ok, retries = 0, 0
for i = 0, n - 1 do
  local key = KEYS[1] .. ':' .. (bucket - i)
  ok = ok + tonumber(redis.call('HGET', key, 'ok') or '0')
  retries = retries + tonumber(redis.call('HGET', key, 'retries') or '0')
    - tonumber(redis.call('HGET', key, 'rok') or '0')
end
local current = KEYS[1] .. ':' .. bucket
-- Mirrors ratecontrol.retry_allowed: wasted retries < ratio * first_successes + min_retries
local allowed = retries < tonumber(ARGV[3]) * ok + tonumber(ARGV[4])
redis.call('HINCRBY', current, allowed and 'retries' or 'denied', 1)
redis.call('EXPIRE', current, tonumber(ARGV[1]) * n * 2)
return allowed and 1 or 0
"""

_FIRST = """
local t = redis.call('TIME')
local current = KEYS[1] .. ':' .. math.floor(tonumber(t[1]) / tonumber(ARGV[1]))
redis.call('HINCRBY', current, ARGV[2], 1)
redis.call('EXPIRE', current, tonumber(ARGV[1]) * tonumber(ARGV[3]) * 2)
return 1
"""


class RedisSharedState:
    def __init__(self, url: str) -> None:
        import redis

        from integrations.ratecontrol import WINDOW_ATTEMPTS, WINDOW_MAX_SECONDS, WINDOW_MIN_ATTEMPTS

        self._redis = redis.Redis.from_url(url)
        self._reserve = self._redis.register_script(_RESERVE)
        self._record = self._redis.register_script(_RECORD)
        self._spend = self._redis.register_script(_SPEND)
        self._first = self._redis.register_script(_FIRST)
        self._window_args = [WINDOW_ATTEMPTS, WINDOW_MAX_SECONDS, WINDOW_MIN_ATTEMPTS]
        self._buckets = BUDGET_WINDOW_SECONDS // BUDGET_BUCKET_SECONDS

    @staticmethod
    def _rate_key(key: str) -> str:
        return f"insurehub:rate:{key}"

    @staticmethod
    def _budget_key(insurer_code: str) -> str:
        return f"insurehub:budget:{insurer_code}"

    def reserve_send_slot(
        self, key: str, *, initial_rate: float, ceiling: float, max_wait: float | None, burst: int = 1
    ) -> float:
        wait = self._reserve(
            keys=[self._rate_key(key)],
            args=[initial_rate, ceiling, -1 if max_wait is None else max_wait, max(burst, 1)],
        )
        return float(wait)

    def record_outcome(self, key: str, *, throttled: bool) -> tuple[RateState, Window] | None:
        closed = self._record(keys=[self._rate_key(key)], args=[int(throttled), *self._window_args])
        if not closed:
            return None
        rate, good, attempts, throttled_count, seconds = closed
        window = Window(attempts=int(attempts), throttled=int(throttled_count), seconds=float(seconds))
        return RateState(rate=float(rate), known_good=float(good)), window

    def set_rate(self, key: str, state: RateState) -> None:
        self._redis.hset(self._rate_key(key), mapping={"rate": str(state.rate), "good": str(state.known_good)})

    def current_rate(self, key: str) -> float | None:
        value = self._redis.hget(self._rate_key(key), "rate")
        return float(value) if value is not None else None

    def budget_record_first(self, insurer_code: str, *, ok: bool) -> None:
        self._first(
            keys=[self._budget_key(insurer_code)], args=[BUDGET_BUCKET_SECONDS, "ok" if ok else "failed", self._buckets]
        )

    def budget_try_spend(self, insurer_code: str, *, ratio: float) -> bool:
        return bool(
            self._spend(
                keys=[self._budget_key(insurer_code)],
                args=[BUDGET_BUCKET_SECONDS, self._buckets, ratio, BUDGET_MIN_RETRIES],
            )
        )

    def budget_refund(self, insurer_code: str) -> None:
        self._first(keys=[self._budget_key(insurer_code)], args=[BUDGET_BUCKET_SECONDS, "rok", self._buckets])

    def budget_snapshot(self, insurer_code: str) -> dict[str, int]:
        now_bucket = int(float(self._redis.time()[0]) // BUDGET_BUCKET_SECONDS)
        totals = {"first_successes": 0, "first_failures": 0, "retries": 0, "retry_successes": 0, "denied": 0}
        names = {
            "ok": "first_successes",
            "failed": "first_failures",
            "retries": "retries",
            "rok": "retry_successes",
            "denied": "denied",
        }
        for i in range(self._buckets):
            for field, value in self._redis.hgetall(f"{self._budget_key(insurer_code)}:{now_bucket - i}").items():
                name = names.get(field.decode())
                if name:
                    totals[name] += int(value)
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
