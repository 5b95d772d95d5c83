"""What an issuance leaves behind besides the policy number: the policy's period and customer,
its document on the way, and a notification for the agent who asked (who may have left)."""

from __future__ import annotations

import pytest
from django.core import mail
from django.test import Client
from django.urls import reverse

from customers.models import Customer
from documents.models import PolicyDocument
from documents.services import document_process
from integrations.adapters.registry import registered_codes
from notifications.models import Notification
from policies.models import Policy
from quotes.services import issuance as svc
from quotes.services import quote_requests
from tests import samples
from tests.conftest import wait_until
from tests.quotes.policy_samples import numbers_holding_a_vkn, really_issued
from tests.quotes.request_samples import tasks_not_sent

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def _only_this_test_works_the_records(monkeypatch):
    """The quote and the issuance are worked by hand here. Commits are real, so their tasks would
    reach the session's qcluster if an earlier test started it, which could claim the quote row or
    the issuance first. Documents still go (a PDF "not ready yet" needs the cluster to come back)."""
    tasks_not_sent(monkeypatch)


def issued(agents, sandbox, code: str, customer: Customer | None = None) -> Policy:
    return really_issued(agents["ACENTE1"], code, data=samples.TRAFIK, customer=customer)


def test_a_policy_number_that_holds_a_tax_number_by_chance_is_shown_whole(agents, sandbox, monkeypatch):
    """ "AK-P-3B0009-000094" holds a valid VKN across its dash; the notification still names the
    policy by its number (it once came out as "AK-P-3B000*-****94", and the agent could not find it)."""
    numbers_holding_a_vkn(monkeypatch, sandbox["anka"].state.ledger)
    policy = issued(agents, sandbox, "anka")
    assert policy.policy_no == "AK-P-3B0009-000094"
    done = Notification.objects.get(recipient=agents["ACENTE1"], kind="issuance_done")
    assert done.title == f"{policy.insurer.name} poliçesi düzenlendi: AK-P-3B0009-000094"


@pytest.mark.parametrize("code", registered_codes())
def test_an_issued_policy_carries_its_period_customer_document_and_notification(
    agents, sandbox, quick_issuance_policy, code, settings, tmp_path
):
    settings.MEDIA_ROOT = tmp_path
    agents["ACENTE1"].email = "ajan@acente.example"
    agents["ACENTE1"].save()
    customer = Customer.objects.create(
        agency=agents["ACENTE1"].agent_profile.agency, name="Ayşe Yılmaz", identity_no=samples.TRAFIK["owner_id"]
    )
    policy = issued(agents, sandbox, code, customer)
    at_insurer = sandbox[code].state.ledger.policies[policy.policy_no]
    assert (policy.starts_on, policy.ends_on) == (at_insurer.starts_on, at_insurer.ends_on)
    assert policy.customer == customer
    desk = Client()
    desk.force_login(agents["ACENTE1"])
    status_page = desk.get(reverse("issuance_detail", args=[policy.issuance.pk])).content.decode()
    assert reverse("policy_detail", args=[policy.pk]) in status_page  # from the policy number to the policy
    results_page = desk.get(reverse("quote_request_detail", args=[policy.issuance.quote_request.public_id]))
    assert "Ayşe Yılmaz" in results_page.content.decode()

    done = Notification.objects.get(recipient=agents["ACENTE1"], kind="issuance_done")
    assert policy.policy_no in done.title and any(policy.policy_no in m.subject for m in mail.outbox)

    document = PolicyDocument.objects.get(policy=policy)
    # The fetch task sent after the commit may be taken by a cluster another test started:
    # either way the record ends SUBMITTED.
    document_process(document.pk)
    wait_until(lambda: PolicyDocument.objects.get(pk=document.pk).state == "SUBMITTED", timeout=30)
    wait_until(lambda: Notification.objects.filter(kind="document_ready").exists(), timeout=10)
    document.refresh_from_db()
    assert document.size and document.sha256
    assert Notification.objects.filter(recipient=agents["ACENTE1"], kind="document_ready").count() == 1


def test_a_refused_issuance_notifies_the_agent(agents, sandbox, quick_issuance_policy):
    request = quote_requests.quote_request_create(user=agents["ACENTE1"], product="trafik", data=samples.TRAFIK)
    row = request.insurer_quotes.get(insurer__code="deniz")
    quote_requests.insurer_quote_fetch(row.id)
    issuance = svc.issuance_start(user=agents["ACENTE1"], insurer_quote_id=row.id, payment_token=samples.PAYMENT_TOKEN)
    sandbox["deniz"].state.add_faults([{"operation": "issue_policy", "fault": "reject", "reason": "Ödeme reddedildi"}])
    assert svc.issuance_process(issuance.pk) == "FAILED"
    refused = Notification.objects.get(recipient=agents["ACENTE1"])
    assert refused.kind == "issuance_refused" and "reddetti" in refused.title
