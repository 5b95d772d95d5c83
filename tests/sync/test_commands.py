"""Operator commands: sync_policies, import_policies, replay_dead_letters, and the workers end to end."""

from __future__ import annotations

import io
import re
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.utils import timezone

from agencies.models import Agency
from integrations.models import InsurerAccount
from policies.models import Policy
from quotes.models import InsurerQuote, Issuance, QuoteRequest
from sync import services as svc
from sync.models import SyncItem, SyncRun
from tests.conftest import REPO_ROOT, wait_until
from tests.sync.conftest import CODES

pytestmark = pytest.mark.django_db

HEADER = "agency_code,insurer,policy_no,product,plate,owner_id,status\n"


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def write_csv(tmp_path: Path, text: str, *, name: str = "portfolio.csv", encoding: str = "utf-8") -> str:
    path = tmp_path / name
    path.write_text(text, encoding=encoding)
    return str(path)


# --- sync_policies ---------------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_sync_policies_runs_to_the_end_and_prints_a_summary(make_policies, sandbox, quick_status_policy):
    """In-process run over every insurer: retries waited out, dead letters counted, one summary line."""
    for code in CODES:
        make_policies(code, [f"{code.upper()}-P-{i}" for i in range(3)])
    make_policies("anka", ["ANKA-P-CANCELLED"], at_insurer="CANCELLED")
    make_policies("deniz", ["DNZ-P-UNKNOWN"], at_insurer=None)
    sandbox["cinar"].state.add_faults([{"operation": "policy_status", "fault": "html", "http_status": 503, "times": 2}])
    out = io.StringIO()

    call_command("sync_policies", "--threads", "4", stdout=out)

    summary = out.getvalue()
    assert "\r" not in summary and summary.count("\n") == 1
    total = 3 * len(CODES) + 2
    assert re.search(
        rf"Sync run #\d+ finished in [\d.]+ s: {total} policies, {total - 1} done \(1 changed\), 1 dead \(1 failed",
        summary,
    )
    run = SyncRun.objects.get()
    assert run.trigger == "command" and run.finished_at is not None and run.counts["done"] == total - 1
    assert Policy.objects.get(policy_no="ANKA-P-CANCELLED").status == "CANCELLED"
    assert SyncItem.objects.filter(attempts=2).count() == 2  # the two that met Çınar's 503 tried again


@pytest.mark.django_db(transaction=True)
def test_sync_policies_draws_a_progress_line_on_a_terminal(make_policies, quick_status_policy):
    """On a terminal the counts are redrawn in place on one line, then the summary follows."""
    make_policies("anka", ["ANKA-P-1", "ANKA-P-2"])
    out = Terminal()

    call_command("sync_policies", stdout=out)

    text = out.getvalue()
    assert text.startswith("\rSync #") and "in-flight" in text and "pending" in text and "dead 0" in text
    assert "done 2" in text and "] 2/2" in text
    assert text.rstrip("\n").splitlines()[-1].startswith("Sync run #")


def test_sync_policies_enqueue_only_hands_the_run_to_the_workers(
    make_policies, sent_tasks, django_capture_on_commit_callbacks
):
    """--enqueue stores the run and queues a few drain tasks (never more than items), sending nothing itself."""
    make_policies("bogazici", ["BGZ-P-1", "BGZ-P-2"])
    out = io.StringIO()

    with django_capture_on_commit_callbacks(execute=True):
        call_command("sync_policies", "--enqueue", stdout=out)

    run = SyncRun.objects.get()
    assert f"Sync run #{run.pk}: 2 policies queued" in out.getvalue()
    assert sent_tasks == [("sync.tasks.sync_drain", None)] * min(2, svc.DRAIN_TASKS)
    assert set(run.items.values_list("state", flat=True)) == {"QUEUED"}


# --- import_policies ------------------------------------------------------------------------------


@pytest.fixture
def portfolio(tmp_path, make_policies) -> str:
    """A portfolio with good rows (2, 3, 9) and every kind of bad one."""
    make_policies("bogazici", ["BGZ-EXISTING"])
    Agency.objects.create(code="ACENTE3", name="Hesapsız Acente")
    return write_csv(
        tmp_path,
        HEADER
        + "ACENTE1,anka,ANKA-IMP-1,trafik,34 abc 123,10000000146,ACTIVE\n"  # 2
        + "ACENTE1,anka,ANKA-IMP-2,dask,,4540536920,cancelled\n"  # 3
        + "NOPE,anka,ANKA-IMP-3,trafik,,10000000146,ACTIVE\n"  # 4
        + "ACENTE1,zurich,Z-1,trafik,,10000000146,ACTIVE\n"  # 5
        + "ACENTE1,anka,ANKA-IMP-4,yat,34 QQ 1,10000000145,LIVE\n"  # 6
        + "ACENTE1,anka,ANKA-IMP-1,trafik,,10000000146,ACTIVE\n"  # 7
        + "ACENTE1,bogazici,BGZ-EXISTING,kasko,,17291716060,ACTIVE\n"  # 8
        + "ACENTE2,cinar,CNR-IMP-1,kasko,06 AB 1234,17291716060,EXPIRED\n"  # 9
        + "ACENTE3,anka,ANKA-IMP-5,trafik,,10000000146,ACTIVE\n",  # 10
    )


def test_import_reports_every_bad_row_by_line_and_imports_the_good_ones(portfolio):
    """Each problem is `line N: field: message`; only the good rows are stored; the command fails."""
    out, err = io.StringIO(), io.StringIO()

    with pytest.raises(CommandError, match="6 bad rows"):
        call_command("import_policies", portfolio, stdout=out, stderr=err)

    lines = err.getvalue().splitlines()
    assert [line.split(":")[0] + ":" + line.split(":")[1] for line in lines] == [
        "line 4: agency_code",
        "line 5: insurer",
        "line 6: product",
        "line 6: plate",
        "line 6: owner_id",
        "line 6: status",
        "line 7: policy_no",
        "line 8: policy_no",
        "line 10: insurer",
    ]
    assert "dosyada 2. satırla aynı" in lines[6] and "zaten kayıtlı" in lines[7]
    assert "Geçersiz T.C. kimlik" in lines[4] and "ACENTE3 acentesinin anka şirketinde hesabı yok" in lines[8]
    assert "3 good rows (3 imported), 6 bad rows." in out.getvalue()
    imported = {p.policy_no: p for p in Policy.objects.exclude(policy_no="BGZ-EXISTING")}
    assert sorted(imported) == ["ANKA-IMP-1", "ANKA-IMP-2", "CNR-IMP-1"]
    assert imported["ANKA-IMP-1"].plate == "34ABC123" and imported["ANKA-IMP-2"].status == "CANCELLED"
    assert imported["CNR-IMP-1"].account == InsurerAccount.objects.get(agency__code="ACENTE2", insurer__code="cinar")


def test_import_dry_run_checks_and_stores_nothing(portfolio):
    """--dry-run reports the same rows and imports none of them."""
    err = io.StringIO()
    with pytest.raises(CommandError):
        call_command("import_policies", portfolio, "--dry-run", stdout=io.StringIO(), stderr=err)
    assert len(err.getvalue().splitlines()) == 9
    assert Policy.objects.count() == 1


def test_import_of_a_clean_excel_file(tmp_path, seeded_accounts):
    """A semicolon-separated file with a byte-order mark (Excel's export) imports without complaint."""
    path = write_csv(
        tmp_path,
        HEADER.replace(",", ";") + "ACENTE2;deniz;DNZ-IMP-1;kasko;35 ABC 42;17291716060;ACTIVE\n",
        encoding="utf-8-sig",
    )
    out = io.StringIO()
    call_command("import_policies", path, stdout=out)
    assert "1 good rows (1 imported), 0 bad rows." in out.getvalue()
    assert Policy.objects.get().plate == "35ABC42"


def test_import_reads_a_windows_1254_file_as_turkish_excel_saves_it(tmp_path, seeded_accounts):
    """Excel on a Turkish Windows saves CSV in Windows-1254: read as such, letters intact, and said so."""
    path = write_csv(
        tmp_path,
        HEADER.replace(",", ";") + "ACENTE2;deniz;DNZ-İŞĞ-1;kasko;35 ABC 42;17291716060;ACTIVE\n",
        encoding="windows-1254",
    )
    out = io.StringIO()
    call_command("import_policies", path, stdout=out)
    assert "Read as windows-1254." in out.getvalue() and "1 good rows (1 imported), 0 bad rows." in out.getvalue()
    assert Policy.objects.get().policy_no == "DNZ-İŞĞ-1"


def test_import_with_an_encoding_named_refuses_bytes_that_are_not_it(tmp_path, seeded_accounts):
    """--encoding utf-8 on a Windows-1254 file: refused whole, naming the file and the encoding."""
    path = write_csv(tmp_path, HEADER + "ACENTE2,deniz,DNZ-Ş-1,kasko,35ABC42,17291716060,ACTIVE\n", encoding="cp1254")
    with pytest.raises(CommandError, match="not utf-8 text"):
        call_command("import_policies", path, "--encoding", "utf-8")
    assert not Policy.objects.exists()


def test_import_refuses_a_file_without_the_columns(tmp_path, seeded_accounts):
    """A header missing a column is refused as a whole, naming what is missing."""
    path = write_csv(tmp_path, "agency_code,insurer,policy_no,product,plate,owner_id\n")
    with pytest.raises(CommandError, match="missing columns: status"):
        call_command("import_policies", path)


@pytest.mark.django_db(transaction=True)
def test_import_exits_non_zero_on_bad_rows(tmp_path, seeded_accounts, worker_env):
    """Run as a real command: bad rows on stderr, exit status 1, the good row imported."""
    path = write_csv(
        tmp_path,
        HEADER + "ACENTE1,anka,ANKA-IMP-1,trafik,,10000000146,ACTIVE\nACENTE1,anka,,trafik,,1,ACTIVE\n",
    )
    done = subprocess.run(
        [sys.executable, "manage.py", "import_policies", path],
        cwd=REPO_ROOT,
        env=worker_env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1
    assert "line 3: policy_no: Bu alan zorunludur." in done.stderr
    assert "line 3: owner_id:" in done.stderr
    assert Policy.objects.filter(policy_no="ANKA-IMP-1").exists()


# --- replay_dead_letters -------------------------------------------------------------------------


@pytest.fixture
def failed_items(make_policies, sandbox, quick_status_policy) -> list[SyncItem]:
    from sync.services import sync_item_process, sync_run_start

    make_policies("anka", ["ANKA-P-1", "ANKA-P-2"], at_insurer=None)
    run = sync_run_start(trigger="command")
    for item in run.items.order_by("pk"):
        assert sync_item_process(item.pk) == "FAILED"
    return list(run.items.order_by("pk"))


def test_replay_command_by_id_and_by_kind(failed_items, sent_tasks, django_capture_on_commit_callbacks):
    """--id replays the records named; --kind all of that kind, oldest first; a live id is reported."""
    first, second = failed_items
    out, err = io.StringIO(), io.StringIO()
    with django_capture_on_commit_callbacks(execute=True):
        call_command("replay_dead_letters", "--id", str(second.pk), "--id", "999999", stdout=out, stderr=err)
    assert f"Replayed 1 sync dead letters, oldest first: {second.pk}." in out.getvalue()
    assert "999999" in err.getvalue()
    assert sent_tasks == [("sync.tasks.sync_drain", None)]
    assert SyncItem.objects.get(pk=second.pk).state == "QUEUED"

    out = io.StringIO()
    call_command("replay_dead_letters", "--kind", first.error_kind, stdout=out)
    assert f"Replayed 1 sync dead letters, oldest first: {first.pk}." in out.getvalue()
    assert set(SyncItem.objects.values_list("state", flat=True)) == {"QUEUED"}


def test_replay_command_needs_a_choice(db):
    """Without --id, --kind or --all nothing is replayed and the command says how to choose."""
    with pytest.raises(CommandError, match="--id N, --kind KIND or --all"):
        call_command("replay_dead_letters")


def test_replay_command_for_issuances(seeded_accounts, sent_tasks, django_capture_on_commit_callbacks):
    """--model issuance replays failed issuances through the issuance task."""
    account = InsurerAccount.objects.select_related("insurer", "agency").get(
        insurer__code="anka", agency__code="ACENTE1"
    )
    user = get_user_model().objects.create_user("ajan-replay", password="test-pass-123")
    request = QuoteRequest.objects.create(
        agency=account.agency,
        created_by=user,
        product="trafik",
        input_data={},
        owner_id="10000000146",
        deadline_at=timezone.now() + timedelta(minutes=1),
    )
    quote = InsurerQuote.objects.create(
        request=request, insurer=account.insurer, account=account, state="SUCCEEDED", quote_no="ANKA-Q-1"
    )
    issuance = Issuance.objects.create(
        insurer_quote=quote,
        quote_request=request,
        agency=account.agency,
        requested_by=user,
        reference="IH-REPLAY-1",
        payload={"quote_no": "ANKA-Q-1", "payment_token": "tok"},
        state="FAILED",
        error_class="permanent",
        error_kind="business_reject",
    )
    out = io.StringIO()
    with django_capture_on_commit_callbacks(execute=True):
        call_command("replay_dead_letters", "--model", "issuance", "--all", stdout=out)
    assert f"Replayed 1 issuance dead letters, oldest first: {issuance.pk}." in out.getvalue()
    assert sent_tasks == [("quotes.tasks.issuance_process", issuance.pk)]


# --- the real queue ------------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_workers_sync_fifty_policies_through_the_queue(qcluster, make_policies, sandbox, quick_status_policy):
    """`sync_policies --enqueue` with real django-q2 workers and the pump task: every item ends final."""
    from django_q.models import Task
    from django_q.tasks import async_task, result

    for code in CODES:
        make_policies(code, [f"{code.upper()}-Q-{i}" for i in range(12)])
    make_policies("anka", ["ANKA-Q-GONE-1", "ANKA-Q-GONE-2"], at_insurer=None)
    sandbox["bogazici"].state.add_faults(
        [{"operation": "policy_status", "fault": "html", "http_status": 503, "times": 4}]
    )
    sandbox["deniz"].state.add_faults(
        [{"operation": "policy_status", "fault": "throttle", "wait_seconds": 0.5, "times": 3}]
    )

    call_command("sync_policies", "--enqueue", stdout=io.StringIO())
    run = SyncRun.objects.get()
    pumps = [async_task("work.tasks.work_pump", 2)]

    def all_final() -> bool:
        if not run.items.filter(state__in=["QUEUED", "IN_FLIGHT", "PENDING"]).exists():
            return True
        if Task.objects.filter(id=pumps[-1]).exists():  # that pump ended: the schedule starts the next one
            pumps.append(async_task("work.tasks.work_pump", 2))
        return False

    wait_until(all_final, timeout=30)
    # The last pump ends inside this test: left running, it would work the next test's records.
    assert result(pumps[-1], wait=10_000) is not None
    states = dict(run.items.values_list("payload__policy_no", "state"))
    assert len(states) == 12 * len(CODES) + 2
    assert {no for no, state in states.items() if state != "SUBMITTED"} == {"ANKA-Q-GONE-1", "ANKA-Q-GONE-2"}
    assert set(run.items.filter(state="FAILED").values_list("error_kind", flat=True)) == {"not_found"}
    # Every refused or throttled call was followed by one more try of the same item, and no other.
    assert sandbox["bogazici"].state.counts()["received"]["policy_status"] == 12 + 4
    assert sandbox["deniz"].state.counts()["received"]["policy_status"] == 12 + 3
    wait_until(lambda: SyncRun.objects.get(pk=run.pk).finished_at, timeout=5)
    assert SyncRun.objects.get(pk=run.pk).counts["done"] == 12 * len(CODES)
    # Leave the cluster idle: a pump still running could move the records of the next tests.
    wait_until(lambda: Task.objects.filter(id=pumps[-1]).exists(), timeout=10)
    # The pump's result is stored; the items' successes, whose outcome is on each item, are not.
    assert not Task.objects.filter(name__startswith="sync_item_process-").exists()
