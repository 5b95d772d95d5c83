"""`python -m bench.scrape [--rows N]`: what a /metrics scrape costs over a month of attempt rows.

Fills a fresh SQLite file (never a real database) with N attempt rows (default one million)
spread over 30 days, times 20 scrapes reading the raw rows, rolls the log up per minute, and
times 20 scrapes again. Prints p50/p95 of each and how long the roll-up took.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import tempfile
import time
from datetime import UTC, datetime, timedelta

OUTCOMES = [
    (1, "", "", "", 0.80),
    (0, "retryable", "throttled", "429", 0.08),
    (0, "retryable", "unavailable", "503", 0.05),
    (0, "permanent", "validation", "VAL_PLAKA", 0.05),
    (0, "unknown", "unclassified", "X-999", 0.02),
]
OPERATIONS = [
    ("trafik_quote", "trafik"),
    ("kasko_quote", "kasko"),
    ("policy_status", "trafik"),
    ("issue_policy", "kasko"),
]


def fill(rows: int, *, now: datetime) -> None:
    from django.db import connection, transaction

    from integrations.adapters.registry import registered_codes

    codes = registered_codes()

    rng = random.Random(30)
    weights = [o[4] for o in OUTCOMES]
    sql = (
        "INSERT INTO integrations_attempt (insurer_code, account_key, operation, product, call, attempt_no, reference,"
        " ok, http_status, provider_code, error_class, error_kind, ambiguous, message, raw_sample, latency_ms,"
        " wait_seconds, wait_reason, started_at, finished_at) VALUES (%s,'',%s,%s,'main',%s,'',%s,200,%s,%s,%s,0,'',''"
        ",%s,NULL,'',%s,%s)"
    )
    span = 30 * 86400
    with connection.cursor() as cursor:
        for offset in range(0, rows, 20000):
            batch = []
            for _ in range(min(20000, rows - offset)):
                ok, cls, kind, code, _ = rng.choices(OUTCOMES, weights)[0]
                operation, product = rng.choice(OPERATIONS)
                started = now - timedelta(seconds=rng.uniform(0, span))
                stamp = started.strftime("%Y-%m-%d %H:%M:%S.%f")
                batch.append(
                    (
                        rng.choice(codes),
                        operation,
                        product,
                        rng.choice((1, 1, 1, 2)),
                        ok,
                        code,
                        cls,
                        kind,
                        rng.lognormvariate(5.5, 1.0),
                        stamp,
                        stamp,
                    )
                )
            with transaction.atomic():
                cursor.executemany(sql, batch)


def time_scrapes(count: int = 20) -> tuple[float, float]:
    from console.metrics import metrics_render

    seconds = []
    for _ in range(count):
        started = time.perf_counter()
        metrics_render()
        seconds.append(time.perf_counter() - started)
    seconds.sort()
    return statistics.median(seconds), seconds[round(0.95 * (len(seconds) - 1))]


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.scrape", description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    args = parser.parse_args()
    directory = tempfile.mkdtemp(prefix="insurehub-scrape-")
    os.environ["BENCH_DB_PATH"] = os.path.join(directory, "scrape.sqlite3")
    os.environ["DJANGO_SETTINGS_MODULE"] = "bench.settings"
    import django

    django.setup()
    from django.core.management import call_command

    from integrations.attempts.retention import ALL_TIME_MINUTE, attempt_minutes_rollup
    from integrations.models import AttemptMinute

    call_command("migrate", verbosity=0)
    now = datetime.now(UTC)
    started = time.perf_counter()
    fill(args.rows, now=now)
    print(f"filled {args.rows:,} attempt rows over 30 days in {time.perf_counter() - started:.1f} s")
    raw = time_scrapes()
    print(f"scrape over raw rows:          p50 {raw[0] * 1000:.0f} ms, p95 {raw[1] * 1000:.0f} ms")
    started = time.perf_counter()
    summed = attempt_minutes_rollup(now=now)
    print(f"roll-up: {summed:,} calls summed in {time.perf_counter() - started:.1f} s")
    minutes = AttemptMinute.objects.exclude(minute=ALL_TIME_MINUTE).count()
    totals = AttemptMinute.objects.filter(minute=ALL_TIME_MINUTE).count()
    print(f"  {minutes:,} minute rows, {totals:,} running-total rows")
    rolled = time_scrapes()
    print(f"scrape after the roll-up:      p50 {rolled[0] * 1000:.0f} ms, p95 {rolled[1] * 1000:.0f} ms")


if __name__ == "__main__":
    main()
