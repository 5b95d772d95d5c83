"""How each client works through its load, inside its agent process.

* `closed_loop`: a fixed batch, `workers` threads taking items off one queue (a nightly run).
* `open_loop`: items arrive on a schedule (offsets from the common start) and go to a pool of
  `workers` threads; an item that arrives while every thread is busy waits its turn.
* `durable_open_loop`: the platform's background path for arriving work: each arrival is
  stored as a QUEUED `SyncItem` and processed by the product's `sync_item_process` (one
  attempt per IN_FLIGHT); retries wait in PENDING and the product's `sync_pump` queues them
  again when due (every 0.5 s, as `sync_run_process` does).

Every driver returns one record per item: key, ok, attempts (where the client knows them),
and when it arrived, started and finished (`time.monotonic()`, common to all processes).
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from bench.clients import RUNNERS
from bench.wire import Wire

Handle = Callable[[str], dict[str, Any]]
logger = logging.getLogger("bench")


def baseline_handle(client: str, wire: Wire, operation: str = "policy_status") -> Handle:
    runner = RUNNERS[client]

    def handle(key: str) -> dict[str, Any]:
        result = runner(lambda: getattr(wire, operation)(key))
        return {"ok": result.ok, "attempts": result.attempts, "code": result.last.code}

    return handle


def engine_handle(endpoint: Any, operation: str = "policy_status") -> Handle:
    """The platform's in-process engine: `insurer_operation_run` with its defaults (shared send
    rate and retry budget in the database, `DatabaseRecorder`)."""
    from integrations.calling.calls import insurer_operation_run

    def handle(key: str) -> dict[str, Any]:
        outcome = insurer_operation_run(
            endpoint=endpoint, operation=operation, data={"policy_no": key}, product="trafik"
        )
        return {
            "ok": outcome.ok,
            "attempts": outcome.attempts,
            "code": outcome.provider_code,
            "stop": outcome.stop_reason,
            "error_class": outcome.error.error_class.value if outcome.error else "",
        }

    return handle


def closed_loop(keys: list[str], *, workers: int, handle: Handle, cap_s: float | None = None) -> list[dict[str, Any]]:
    """Items still in a client's hands after `cap_s` are left out of the result (and counted open)."""
    todo: queue.Queue = queue.Queue()
    for key in keys:
        todo.put(key)
    records: list[dict[str, Any]] = []

    def worker() -> None:
        while True:
            try:
                key = todo.get_nowait()
            except queue.Empty:
                return
            began = time.monotonic()
            record = handle(key)
            record.update(key=key, arrived=began, began=began, finished=time.monotonic())
            records.append(record)

    threads = [threading.Thread(target=worker, daemon=True) for _ in range(workers)]
    for thread in threads:
        thread.start()
    deadline = None if cap_s is None else time.monotonic() + cap_s
    for thread in threads:
        thread.join(None if deadline is None else max(deadline - time.monotonic(), 0.0))
    return list(records)


def open_loop(
    schedule: list[tuple[float, str]], *, start_at: float, workers: int, handle: Handle, cap_s: float
) -> tuple[list[dict[str, Any]], int]:
    """Returns the finished items' records and how many were still unfinished at the cap."""
    records: list[dict[str, Any]] = []
    done = threading.Event()
    remaining = [len(schedule)]
    lock = threading.Lock()
    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="client")

    def task(key: str, arrived: float) -> None:
        began = time.monotonic()
        try:
            record = handle(key)
        except Exception as exc:  # a crash is a failure of this item, not of the run
            record = {"ok": False, "attempts": 0, "code": f"CRASH {type(exc).__name__}: {exc}"[:200]}
        record.update(key=key, arrived=arrived, began=began, finished=time.monotonic())
        records.append(record)
        with lock:
            remaining[0] -= 1
            if remaining[0] == 0:
                done.set()

    if not schedule:
        return [], 0
    for offset, key in schedule:
        delay = start_at + offset - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        pool.submit(task, key, time.monotonic())
    done.wait(timeout=max(start_at + cap_s - time.monotonic(), 0.0))
    pool.shutdown(wait=False, cancel_futures=True)
    finished = list(records)
    return finished, len(schedule) - len(finished)


def durable_open_loop(
    schedule: list[tuple[float, str]],
    *,
    start_at: float,
    workers: int,
    cap_s: float,
    policy_ids: dict[str, int],
    run: Any,
) -> tuple[list[dict[str, Any]], int, dict[str, int]]:
    """The product's durable path for work that arrives over time (see the module docstring).

    Returns the finished items' records, how many were still open at the cap, and why (state and
    the item's last message, counted)."""
    from django.db import connection

    from sync.models import SyncItem
    from sync.services import sync_item_process, sync_pump
    from work.item import WorkState

    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="sync")
    arrived_at: dict[int, tuple[str, float]] = {}
    submitted: set[int] = set()
    lock = threading.Lock()
    arrivals_done = threading.Event()

    def process(item_id: int) -> None:
        try:
            sync_item_process(item_id)
        except Exception:  # as the product's own loop does: log, carry on; the lease brings it back
            logger.exception("sync item %s: processing crashed", item_id)
        finally:
            with lock:
                submitted.discard(item_id)
            connection.close()

    def submit(item_id: int) -> None:
        with lock:
            if item_id in submitted:
                return
            submitted.add(item_id)
        pool.submit(process, item_id)

    def arrivals() -> None:
        try:
            for offset, key in schedule:
                delay = start_at + offset - time.monotonic()
                if delay > 0:
                    time.sleep(delay)
                policy_id = policy_ids[key]
                item = SyncItem.objects.create(
                    run=run,
                    policy_id=policy_id,
                    payload={"policy_no": key, "insurer": _insurer_of(key), "product": "trafik"},
                )
                arrived_at[item.pk] = (key, time.monotonic())
                submit(item.pk)
        finally:
            connection.close()
            arrivals_done.set()

    feeder = threading.Thread(target=arrivals, name="arrivals", daemon=True)
    feeder.start()
    open_states = (WorkState.QUEUED, WorkState.IN_FLIGHT, WorkState.PENDING)
    deadline = start_at + cap_s
    while time.monotonic() < deadline:
        time.sleep(0.5)
        for item_id in sync_pump(processing_run=run):
            submit(item_id)
        if arrivals_done.is_set() and not SyncItem.objects.filter(run=run, state__in=open_states).exists():
            break
    pool.shutdown(wait=False, cancel_futures=True)
    offset = time.time() - time.monotonic()
    records = []
    unfinished = 0
    open_why: dict[str, int] = {}
    for pk, state, attempts, throttled, finished_at, kind, error_class, message in SyncItem.objects.filter(
        run=run
    ).values_list(
        "pk", "state", "attempts", "throttled_attempts", "finished_at", "error_kind", "error_class", "error_message"
    ):
        key, arrived = arrived_at.get(pk, ("", 0.0))
        if state in open_states:
            unfinished += 1
            why = f"{state}: {message or kind or 'waiting'}"[:120]
            open_why[why] = open_why.get(why, 0) + 1
            continue
        records.append(
            {
                "key": key,
                "ok": state == WorkState.SUBMITTED,
                "state": state,
                "attempts": attempts,
                "throttled_attempts": throttled,
                "code": kind,
                "error_class": error_class,
                "arrived": arrived,
                "began": arrived,
                "finished": finished_at.timestamp() - offset if finished_at else None,
            }
        )
    return records, unfinished, open_why


def _insurer_of(policy_no: str) -> str:
    """The sandbox insurer whose number prefix the record carries (`bench.s5_mixed.PREFIX`)."""
    from sandbox import insurer_class, registered_codes

    prefix = policy_no.split("-", 1)[0]
    return next(code for code in registered_codes() if insurer_class(code).prefix == prefix)


# --- agent entry points for open-loop scenarios ------------------------------------------------
#
# spec: {"schedule": [[offset, key], ...], "workers", "cap_s", "client", "agency",
#        "insurers": {code: {"url", "credentials", "contracted_rate"}}}


def _compact(records: list[dict[str, Any]]) -> list[list[Any]]:
    return [
        [
            r["key"],
            bool(r["ok"]),
            r.get("state") or ("ok" if r["ok"] else "failed"),
            r.get("attempts"),
            r["arrived"],
            r["finished"],
            r.get("code", ""),
            r.get("stop", ""),
        ]
        for r in records
    ]


def _by_insurer(handles: dict[str, Handle]) -> Handle:
    def handle(key: str) -> dict[str, Any]:
        return handles[_insurer_of(key)](key)

    return handle


def baseline_open_main(spec: dict[str, Any]) -> dict[str, Any]:
    from bench.agent import ready_and_wait
    from bench.wire import wire_for

    wires = {code: wire_for(code, info["url"], info["credentials"]) for code, info in spec["insurers"].items()}
    for wire in wires.values():
        wire.prepare()  # set-up (a token), before the clock starts
    handles = {code: baseline_handle(spec["client"], wire) for code, wire in wires.items()}
    start_at = ready_and_wait()
    schedule = [(offset, key) for offset, key in spec["schedule"]]
    records, unfinished = open_loop(
        schedule, start_at=start_at, workers=spec["workers"], handle=_by_insurer(handles), cap_s=spec["cap_s"]
    )
    return {
        "flavour": "plain requests, a pool of worker threads",
        "records": _compact(records),
        "unfinished": unfinished,
    }


def engine_open_main(spec: dict[str, Any]) -> dict[str, Any]:
    from bench.agent import ready_and_wait
    from integrations.calling.calls import Endpoint

    handles = {
        code: engine_handle(
            Endpoint(
                insurer_code=code,
                base_url=info["url"],
                credentials=info["credentials"],
                account_key=f"{code}:{spec['agency']}",
                contracted_rate=info["contracted_rate"],
            )
        )
        for code, info in spec["insurers"].items()
    }
    start_at = ready_and_wait()
    records, unfinished = open_loop(
        [(o, k) for o, k in spec["schedule"]],
        start_at=start_at,
        workers=spec["workers"],
        handle=_by_insurer(handles),
        cap_s=spec["cap_s"],
    )
    return {
        "flavour": "in-process engine: insurer_operation_run per item (policy_status policy, shared send rate and "
        "retry budget in SQLite, DatabaseRecorder), a pool of worker threads",
        "records": _compact(records),
        "unfinished": unfinished,
    }


def durable_open_main(spec: dict[str, Any]) -> dict[str, Any]:
    from bench.agent import ready_and_wait
    from integrations.models import InsurerAccount
    from policies.models import Policy
    from sync.models import SyncRun

    accounts = {
        a.insurer.code: a
        for a in InsurerAccount.objects.select_related("insurer", "agency").filter(agency_code=spec["agency"])
    }
    keys = [key for _, key in spec["schedule"]]
    Policy.objects.bulk_create(
        [
            Policy(
                agency=accounts[_insurer_of(key)].agency,
                insurer=accounts[_insurer_of(key)].insurer,
                account=accounts[_insurer_of(key)],
                product="trafik",
                policy_no=key,
            )
            for key in keys
        ],
        batch_size=1000,
    )
    policy_ids = dict(Policy.objects.filter(account__agency_code=spec["agency"]).values_list("policy_no", "pk"))
    run = SyncRun.objects.create(trigger=SyncRun.Trigger.COMMAND)
    start_at = ready_and_wait()
    records, unfinished, open_why = durable_open_loop(
        [(o, k) for o, k in spec["schedule"]],
        start_at=start_at,
        workers=spec["workers"],
        cap_s=spec["cap_s"],
        policy_ids=policy_ids,
        run=run,
    )
    return {
        "flavour": "durable SyncItem per arrival, the product's sync_item_process (one attempt per IN_FLIGHT) and "
        "sync_pump every 0.5 s; DatabaseRecorder, shared state in SQLite",
        "records": _compact(records),
        "unfinished": unfinished,
        "open_why": open_why,
    }
