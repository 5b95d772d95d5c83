"""The controller of a run on namespace hosts: `python -m bench.hosts_ctl COMMAND 'JSON'`.

The test and bench process that made the hosts (`bench/netns.py`) is a Django process of its
own settings (pytest's test database, the benchmark's SQLite file); the run's data lives in the
db host's PostgreSQL. So each step that needs the run's database is one short process in the
root namespace on the Unix sockets (`Hosts.local_env()`): it prints one JSON line and exits.

Commands: `prepare` (schema, insurers and accounts, policies, quick retry policies, the work pump
as the only schedule), `policies` (replace the policies and everything made for them),
`clusters` (wait until N qclusters report to the broker), `enqueue` (a sync run handed to N drain
tasks), `wait` (until a share is submitted, or until nothing is open), `report` (every item of
the run).
"""

from __future__ import annotations

import json
import os
import sys
import time
from dataclasses import asdict
from typing import Any

OPEN_STATES = ("QUEUED", "IN_FLIGHT", "PENDING")


def prepare(spec: dict[str, Any]) -> dict[str, Any]:
    from django.core.management import call_command
    from django_q.models import Schedule

    from integrations.demo import demo_data_seed
    from integrations.models import Insurer, InsurerAccount, OperationPolicy
    from integrations.retry_policies import default_policy
    from sandbox import DEFAULT_ACCOUNTS
    from work.schedules import ensure_schedules

    call_command("migrate", verbosity=0)
    demo_data_seed(base_urls=spec["urls"], accounts=DEFAULT_ACCOUNTS, contracted_rate=spec.get("contract", 20.0))
    codes = spec.get("codes") or list(spec["urls"])
    InsurerAccount.objects.exclude(insurer__code__in=codes).update(is_active=False)
    for insurer in Insurer.objects.filter(code__in=codes):
        for operation, fields in spec.get("operation_policies", {}).items():
            values = {**asdict(default_policy(operation)), **fields}  # as an admin's override is stored
            OperationPolicy.objects.update_or_create(insurer=insurer, operation=operation, defaults=values)
    ensure_schedules()
    Schedule.objects.exclude(func="work.tasks.work_pump").delete()
    return {"policies": policies(spec)["policies"]}


def policies(spec: dict[str, Any]) -> dict[str, Any]:
    """`count` ACTIVE policies, round robin over the active accounts of `codes`, numbered as the
    sandbox expects (`<PREFIX>-P-<tag>-<n>`); earlier runs, items and policies deleted first."""
    from documents.models import PolicyDocument
    from integrations.models import InsurerAccount
    from policies.models import Policy
    from sandbox import insurer_class
    from sync.models import SyncItem, SyncRun

    PolicyDocument.objects.all().delete()  # the work pump's missing-documents scan made them
    SyncItem.objects.all().delete()
    SyncRun.objects.all().delete()
    Policy.objects.all().delete()
    accounts = list(
        InsurerAccount.objects.filter(is_active=True, insurer__code__in=spec.get("codes") or list(spec["urls"]))
        .select_related("insurer", "agency")
        .order_by("insurer__code", "agency__code")
    )
    rows = []
    for i in range(spec["count"]):
        account = accounts[i % len(accounts)]
        number = f"{insurer_class(account.insurer.code).prefix}-P-{spec.get('tag', 'NS')}-{i:06d}"
        rows.append(
            Policy(
                agency=account.agency,
                insurer=account.insurer,
                account=account,
                product="trafik",
                policy_no=number,
                owner_id="10000000146",
            )
        )
    Policy.objects.bulk_create(rows, batch_size=1000)
    return {"policies": [[row.policy_no, row.insurer.code] for row in rows]}


def clusters(spec: dict[str, Any]) -> dict[str, Any]:
    """Wait until `count` qclusters report to the broker, all of their workers up."""
    from django_q.conf import Conf
    from django_q.status import Stat

    up = {str(Conf.IDLE), str(Conf.WORKING)}  # translated labels: compared as django-q2 wrote them
    deadline = time.monotonic() + spec.get("timeout", 90)
    while True:
        stats = [s for s in Stat.get_all() if str(s.status) in up]
        if len(stats) >= spec["count"]:
            return {"clusters": [str(s.cluster_id) for s in stats]}
        if time.monotonic() > deadline:
            raise SystemExit(f"only {len(stats)} of {spec['count']} qclusters up after {spec.get('timeout', 90)} s")
        time.sleep(0.3)


def enqueue(spec: dict[str, Any]) -> dict[str, Any]:
    from sync.models import SyncRun
    from sync.services import sync_run_enqueue, sync_run_start

    run = sync_run_start(trigger=SyncRun.Trigger.COMMAND)
    queued = sync_run_enqueue(run, drains=spec.get("drains"))
    return {"run": run.pk, "queued": queued}


def _states(run_id: int) -> dict[str, int]:
    from django.db.models import Count

    from sync.models import SyncItem

    rows = SyncItem.objects.filter(run_id=run_id).order_by().values_list("state").annotate(n=Count("pk"))
    return dict(rows)


def wait(spec: dict[str, Any]) -> dict[str, Any]:
    """Until `submitted` items are SUBMITTED (or, without it, until none is open); then the states
    and the policies IN_FLIGHT at that moment."""
    from sync.models import SyncItem

    deadline = time.monotonic() + spec.get("timeout", 240)
    while True:
        states = _states(spec["run"])
        if "submitted" in spec:
            done = states.get("SUBMITTED", 0) >= spec["submitted"]
        else:
            done = not any(states.get(state) for state in OPEN_STATES)
        if done or time.monotonic() > deadline:
            in_flight = SyncItem.objects.filter(run_id=spec["run"], state="IN_FLIGHT")
            return {
                "done": done,
                "states": states,
                "in_flight": list(in_flight.values_list("payload__policy_no", flat=True)),
            }
        time.sleep(spec.get("poll", 0.2))


def report(spec: dict[str, Any]) -> dict[str, Any]:
    """Every item of the run, the policies' stored statuses, and the run's span on the database's
    clock (stored → last item's last change) for a rate that no process start-up distorts."""
    from django.db.models import Max

    from policies.models import Policy
    from sync.models import SyncItem, SyncRun

    if spec.get("finished_within"):
        deadline = time.monotonic() + spec["finished_within"]
        while SyncRun.objects.get(pk=spec["run"]).finished_at is None and time.monotonic() < deadline:
            time.sleep(0.3)
    run = SyncRun.objects.get(pk=spec["run"])
    items = SyncItem.objects.filter(run=run).order_by("pk")
    rows = list(
        items.values_list("payload__policy_no", "state", "observed_status", "attempts", "reclaims", "error_kind")
    )
    last = items.aggregate(last=Max("updated_at"))["last"]
    return {
        "items": rows,
        "stored": dict(Policy.objects.values_list("policy_no", "status")),
        "finished": run.finished_at is not None,
        "seconds": (last - run.started_at).total_seconds() if last else None,
    }


COMMANDS = {"prepare": prepare, "policies": policies, "clusters": clusters, "enqueue": enqueue}
COMMANDS.update(wait=wait, report=report)


def call(env: dict[str, str], command: str, spec: dict[str, Any], *, timeout: float = 600) -> dict[str, Any]:
    """Run one command in a process of its own (env: `Hosts.local_env()`); its JSON answer."""
    import subprocess

    from bench.netns import REPO_ROOT

    done = subprocess.run(
        [sys.executable, "-m", "bench.hosts_ctl", command, json.dumps(spec)],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    if done.returncode != 0:
        raise RuntimeError(f"hosts_ctl {command} failed ({done.returncode}): {done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv: list[str]) -> int:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "insurehub.settings.test")
    import django

    django.setup()
    result = COMMANDS[argv[1]](json.loads(argv[2]) if len(argv) > 2 else {})
    sys.stdout.write(json.dumps(result, default=str) + "\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
