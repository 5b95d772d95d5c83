"""Fetching policy PDFs in the background: stored through `default_storage`, "not ready yet" as
a wait the insurer asks for, re-fetch, dead letters. Real HTTP against the sandbox insurers."""

from __future__ import annotations

import hashlib
import time
from datetime import timedelta

import pytest
from django.core.files.storage import default_storage
from django.utils import timezone

from documents import services
from documents.models import PolicyDocument
from integrations.calling.calls import endpoint_for_account, insurer_operation_run
from policies.models import Policy
from tests.conftest import wait_until
from tests.documents.conftest import INSURERS
from tests.work.sends import pump_kind
from work.replay import dead_letters_replay

pytestmark = pytest.mark.django_db


def fetched(policy: Policy) -> PolicyDocument:
    """Ask for the policy's document and run its one due try, as a worker would."""
    document = services.document_request(policy=policy)
    services.document_process(document.pk)
    document.refresh_from_db()
    return document


def stored_bytes(document: PolicyDocument) -> bytes:
    with default_storage.open(document.file.name, "rb") as handle:
        return handle.read()


@pytest.mark.parametrize("code", INSURERS)
def test_background_fetch_stores_the_insurers_pdf(issue, media_root, code):
    """The fetched PDF is stored under MEDIA_ROOT; its size and SHA-256 are the insurer's PDF's."""
    policy = issue(code)
    document = fetched(policy)
    assert document.state == "SUBMITTED", (document.error_kind, document.provider_code, document.error_message)
    content = stored_bytes(document)
    assert content.startswith(b"%PDF-")
    assert document.sha256 == hashlib.sha256(content).hexdigest()
    assert document.size == len(content) and document.content_type == "application/pdf"
    assert document.fetched_at is not None and document.agency_id == policy.agency_id
    assert document.file.name == f"policy-documents/{policy.agency.code}/{code}-{policy.policy_no}.pdf"
    assert (media_root / document.file.name).read_bytes() == content
    # The same PDF, asked of the insurer directly over its own path.
    direct = insurer_operation_run(
        endpoint=endpoint_for_account(policy.account),
        operation="policy_document",
        data={"policy_no": policy.policy_no},
    )
    assert direct.ok and direct.result.sha256 == document.sha256


def test_document_request_is_idempotent(issue):
    """Asking twice (the issuance hook, then the missing-documents scan) keeps one record."""
    policy = issue("anka")
    first = services.document_request(policy=policy)
    second = services.document_request(policy=policy)
    assert first.pk == second.pk and PolicyDocument.objects.count() == 1
    assert first.state == "QUEUED" and first.payload["policy_no"] == policy.policy_no


def test_not_ready_waits_as_long_as_the_insurer_asks_then_succeeds(issue, sandbox):
    """Anka's 409 DOCUMENT_NOT_READY + Retry-After: PENDING until then, not a failed try; then stored."""
    sandbox["anka"].state.configure(document_delay_seconds=2)
    policy = issue("anka")
    document = services.document_request(policy=policy)
    before = timezone.now()
    assert services.document_process(document.pk) == "PENDING"
    document.refresh_from_db()
    assert document.error_kind == "not_ready" and document.throttled_attempts == 1 and not document.file
    # Retry-After is whole seconds; the spread adds at most a fifth on top, never less than asked.
    wait = (document.next_attempt_at - before).total_seconds()
    assert 1.0 <= wait <= 3 * 1.2 + 1.0, wait
    assert document.pk not in pump_kind(PolicyDocument)  # not due yet
    wait_until(lambda: timezone.now() >= document.next_attempt_at, timeout=10)
    assert document.pk in pump_kind(PolicyDocument)
    assert services.document_process(document.pk) == "SUBMITTED"
    document.refresh_from_db()
    assert stored_bytes(document).startswith(b"%PDF-")
    assert sandbox["anka"].state.counts()["received"]["policy_document"] == 2


@pytest.mark.parametrize("code", INSURERS)
def test_not_ready_is_a_wait_at_every_insurer(issue, sandbox, code):
    """Every insurer's "not ready yet" leaves the record PENDING without using up a try."""
    sandbox[code].state.configure(document_delay_seconds=1.5)
    policy = issue(code)
    document = services.document_request(policy=policy)
    assert services.document_process(document.pk) == "PENDING"
    document.refresh_from_db()
    assert document.error_kind == "not_ready", (document.provider_code, document.error_message)
    assert document.throttled_attempts == document.attempts == 1
    assert document.next_attempt_at > timezone.now()
    time.sleep(max((document.next_attempt_at - timezone.now()).total_seconds(), 0) + 0.05)
    pump_kind(PolicyDocument)
    assert services.document_process(document.pk) == "SUBMITTED"


def test_refetch_keeps_the_old_file_until_the_new_one_is_stored(issue, agents, django_capture_on_commit_callbacks):
    """ "Yeniden al": the record goes back to the queue, the old PDF stays until the new one replaces it."""
    policy = issue("anka")
    document = fetched(policy)
    old_name = document.file.name
    again = services.document_refetch(user=agents["ACENTE1"], policy_id=policy.pk)
    assert again.pk == document.pk and again.state == "QUEUED" and again.attempts == 0
    assert again.file.name == old_name and default_storage.exists(old_name)
    # A second click while it is queued changes nothing.
    assert services.document_refetch(user=agents["ACENTE1"], policy_id=policy.pk).state == "QUEUED"
    with django_capture_on_commit_callbacks(execute=True):  # the old file goes once the new one is committed
        assert services.document_process(document.pk) == "SUBMITTED"
    again.refresh_from_db()
    assert again.file.name != old_name and default_storage.exists(again.file.name)
    assert not default_storage.exists(old_name)
    assert again.sha256 == document.sha256  # the sandbox's PDF is deterministic


def test_refetch_is_the_policys_own_agency_only(issue, agents, head_office):
    """Another agency, or a head-office reader, cannot make this agency's account fetch."""
    policy = issue("anka")
    document = fetched(policy)
    with pytest.raises(Policy.DoesNotExist):
        services.document_refetch(user=agents["ACENTE2"], policy_id=policy.pk)
    with pytest.raises(PermissionError):
        services.document_refetch(user=head_office, policy_id=policy.pk)
    assert PolicyDocument.objects.get(pk=document.pk).state == "SUBMITTED"


def test_unknown_policy_fails_and_a_replay_sends_it_again(issue, sandbox):
    """The insurer's not-found is permanent: FAILED with its code; a replay after a fix queues it."""
    policy = issue("anka")
    Policy.objects.filter(pk=policy.pk).update(policy_no="ANK-P-DOESNOTEXIST")
    policy.refresh_from_db()
    document = fetched(policy)
    assert document.state == "FAILED" and document.error_kind == "not_found" and not document.file
    assert dead_letters_replay(model=PolicyDocument, ids=[document.pk]) == [document.pk]
    assert PolicyDocument.objects.get(pk=document.pk).state == "QUEUED"


def test_missing_documents_are_requested_once(issue):
    """Policies without a record (imported, issued before documents) each get one, once."""
    policies = [issue("anka"), issue("bogazici")]
    PolicyDocument.objects.all().delete()  # as if issued before documents existed
    assert services.documents_request_missing(limit=10) == 2
    assert services.documents_request_missing(limit=10) == 0
    assert set(PolicyDocument.objects.values_list("policy_id", flat=True)) == {p.pk for p in policies}


def test_pump_takes_back_a_dead_workers_record(issue):
    """A record left IN_FLIGHT by a dead worker is taken back once its lease is over, then stored."""
    document = services.document_request(policy=issue("anka"))
    PolicyDocument.objects.filter(pk=document.pk).update(
        state="IN_FLIGHT", lease_expires_at=timezone.now() - timedelta(seconds=1)
    )
    assert document.pk in pump_kind(PolicyDocument)
    assert services.document_process(document.pk) == "SUBMITTED"


def test_ready_hook_is_called_once_the_document_is_stored(issue, monkeypatch, django_capture_on_commit_callbacks):
    """`document_ready` (the notifications' hook) runs after the commit, with the stored record."""
    seen: list[tuple[int, str]] = []
    monkeypatch.setattr(services, "document_ready", lambda document: seen.append((document.pk, document.state)))
    document = services.document_request(policy=issue("anka"))
    with django_capture_on_commit_callbacks(execute=True):
        services.document_process(document.pk)
    assert seen == [(document.pk, "SUBMITTED")]
