"""What `/healthz` and `/readyz` check (answered by `console.probes.ProbeMiddleware`).

- **`/healthz`** (liveness): the process answers. Nothing else is touched (no database, no
  cache), so a restart is never triggered by a dependency that a restart cannot fix.
- **`/readyz`** (readiness): every dependency the platform needs, each a django-health-check
  check, run side by side with a time budget each, answered as JSON (200 when all pass, 503
  otherwise, every check's verdict in the body):

  | check | fails when |
  |---|---|
  | `database` | a `SELECT 1` on a fresh connection fails |
  | `cache` | a set/get round trip in the shared cache fails (Redis down, the table missing) |
  | `storage` | a file cannot be written, read back and deleted where policy PDFs go |
  | `migrations` | the code has migrations the database has not applied |
  | `work_pump` | the work pump's last good pass is older than `WORK_PUMP_STALE_SECONDS` (180) |
  | `qcluster` | no django-q2 cluster has saved its heartbeat (it does every half second, kept 3 s) |

The two last are the background work's: a web process with no qcluster behind it serves pages
but nothing reaches an insurer. `/readyz?scope=web` leaves them out, for a load balancer that
should keep sending agents to a web process while the workers restart.

Both answer before host validation, the HTTPS redirect and sessions (`ProbeMiddleware`, first in
MIDDLEWARE): a kubelet or a load balancer asks a pod's address over plain HTTP. Neither shows a
secret or personal data: a check's message says what failed, never the connection string.
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from asgiref.sync import async_to_sync
from django.core.cache import caches
from django.db import DEFAULT_DB_ALIAS, connections
from django.db.migrations.executor import MigrationExecutor
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils import timezone
from health_check.base import HealthCheck
from health_check.checks import Database, Storage
from health_check.exceptions import ServiceUnavailable
from health_check.views import HealthCheckView

from work.pump_beat import pump_beat_last, pump_stale_after_seconds


def _closing_connections(run: Callable[[], None]) -> Callable[[], None]:
    """A sync check runs on an executor thread: its database connection must not outlive it."""

    def checked() -> None:
        try:
            run()
        finally:
            connections.close_all()

    return checked


@dataclasses.dataclass
class SharedCache(HealthCheck):
    """A set and a get in the shared cache; any failure (Redis refused, the table missing) is "down"."""

    alias: str = "default"

    def run(self) -> None:
        key = f"ops:readyz:{time.time_ns()}"
        try:
            cache = caches[self.alias]
            cache.set(key, "ok", timeout=10)
            answered = cache.get(key)
            cache.delete(key)
        except Exception as exc:
            raise ServiceUnavailable(f"önbelleğe ulaşılamıyor ({type(exc).__name__})") from exc
        finally:
            connections.close_all()
        if answered != "ok":
            raise ServiceUnavailable("önbellek yazılanı geri vermedi")


# A database seen fully migrated stays so until a rollback (rare, and seen within this long).
MIGRATIONS_OK_SECONDS = 60.0
_migrations_applied_until = 0.0


@dataclasses.dataclass
class MigrationsApplied(HealthCheck):
    """The database has every migration this code ships (a deploy that skipped `migrate`)."""

    alias: str = DEFAULT_DB_ALIAS

    def run(self) -> None:
        global _migrations_applied_until
        if time.monotonic() < _migrations_applied_until:
            return  # this process saw them all applied a moment ago: reading every file again costs ~0.1 s
        try:
            connection = connections[self.alias]
            executor = MigrationExecutor(connection)
            plan = executor.migration_plan(executor.loader.graph.leaf_nodes())
        except Exception as exc:
            raise ServiceUnavailable(f"uygulanan göçler okunamadı ({type(exc).__name__})") from exc
        finally:
            connections.close_all()
        if plan:
            names = ", ".join(f"{m.app_label}.{m.name}" for m, _ in plan[:5])
            raise ServiceUnavailable(f"{len(plan)} göç uygulanmamış: {names}")
        _migrations_applied_until = time.monotonic() + MIGRATIONS_OK_SECONDS


@dataclasses.dataclass
class WorkPumpRecent(HealthCheck):
    """The work pump finished a pass within its allowance (work.pump_beat)."""

    def run(self) -> None:
        try:
            last = pump_beat_last()
        except Exception as exc:
            raise ServiceUnavailable(f"iş pompasının son çalışması okunamadı ({type(exc).__name__})") from exc
        finally:
            connections.close_all()
        if last is None:
            raise ServiceUnavailable("iş pompası hiç çalışmamış (qcluster ve ensure_schedules çalışıyor mu?)")
        age = (timezone.now() - last).total_seconds()
        if age > pump_stale_after_seconds():
            raise ServiceUnavailable(f"iş pompası {int(age)} saniyedir çalışmadı")


@dataclasses.dataclass
class QclusterHeartbeat(HealthCheck):
    """At least one django-q2 cluster saved its status within the last few seconds."""

    def run(self) -> None:
        from django_q.status import Stat

        try:
            clusters = Stat.get_all()
        except Exception as exc:
            raise ServiceUnavailable(f"qcluster durumu okunamadı ({type(exc).__name__})") from exc
        finally:
            connections.close_all()
        if not clusters:
            raise ServiceUnavailable("çalışan qcluster yok")


CHECK_NAMES: dict[type[HealthCheck], str] = {
    Database: "database",
    SharedCache: "cache",
    Storage: "storage",
    MigrationsApplied: "migrations",
    WorkPumpRecent: "work_pump",
    QclusterHeartbeat: "qcluster",
}
WEB_CHECKS = (Database, SharedCache, Storage, MigrationsApplied)
ALL_CHECKS = (*WEB_CHECKS, WorkPumpRecent, QclusterHeartbeat)


class ReadinessView(HealthCheckView):
    """django-health-check's runner; always JSON, 503 (not its 500) when a check fails."""

    checks: tuple[type[Any], ...] = ALL_CHECKS  # or WEB_CHECKS, for ?scope=web

    def get_checks(self):
        for check in super().get_checks():
            if isinstance(check, Database | Storage):
                check.run = _closing_connections(check.run)
            yield check

    async def get(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if request.GET.get("scope") == "web":
            self.checks = WEB_CHECKS
        with self.get_executor() as executor:
            self.results = await asyncio.gather(*(check.get_result(executor) for check in self.get_checks()))
        failed = any(result.error for result in self.results)
        body = {
            "status": "fail" if failed else "ok",
            "checked_at": timezone.now().astimezone(datetime.UTC).isoformat(timespec="seconds"),
            "checks": {
                CHECK_NAMES.get(type(result.check), type(result.check).__name__): {
                    "ok": result.error is None,
                    **({"error": result.error.message} if result.error else {}),
                    "seconds": round(result.time_taken, 3),
                }
                for result in self.results
            },
        }
        return JsonResponse(body, status=503 if failed else 200, json_dumps_params={"ensure_ascii": False})


_readiness = async_to_sync(ReadinessView.as_view())


def readyz(request: HttpRequest) -> HttpResponse:
    """The readiness view, from a synchronous caller. A caller whose thread already runs an event
    loop (a test driving a browser through Playwright's sync API; an async server) cannot wait on
    another one there, so the checks run from a thread of their own."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return _readiness(request)
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="readyz") as pool:
        return pool.submit(_readiness, request).result()
