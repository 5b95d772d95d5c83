"""Cancelling a policy at every insurer, asserted on the insurer's side: one cancellation per
policy whatever is lost on the way, the refund the insurer answered, the same reference again."""

from __future__ import annotations

import pytest

from integrations.adapters.registry import registered_codes
from policies.models import Cancellation, Policy
from policies.services import cancellations as svc
from tests.conftest import api_as
from tests.policies.conftest import issued, run_to_the_end
from work.item import WorkState
from work.replay import dead_letters_replay

pytestmark = pytest.mark.django_db

INSURERS = registered_codes()


def cancellations_at(sandbox, code: str, policy_no: str) -> int:
    return sandbox[code].state.counts()["cancellations_by_policy"].get(policy_no, 0)


def start(agents, policy: Policy, **kwargs) -> Cancellation:
    assert policy.starts_on is not None  # the fixtures' policies have a period
    fields = {"reason": "customer_request", "effective_on": policy.starts_on.isoformat(), **kwargs}
    return svc.cancellation_start(user=agents["ACENTE1"], policy_id=policy.pk, **fields)


@pytest.mark.parametrize("code", INSURERS)
def test_a_cancellation_stores_the_insurers_refund_and_cancels_the_policy(agents, sandbox, quick_cancel_policy, code):
    policy = issued(agents, code)
    cancellation = run_to_the_end(start(agents, policy, reason="duplicate"))
    assert cancellation.state == WorkState.SUBMITTED, (cancellation.provider_code, cancellation.error_message)
    assert cancellation.refund == policy.premium == cancellation.refund_estimate  # a duplicate: all of it back
    assert cancellation.cancelled_on == policy.starts_on
    assert Policy.objects.get(pk=policy.pk).status == Policy.Status.CANCELLED
    assert cancellations_at(sandbox, code, policy.policy_no) == 1


@pytest.mark.parametrize("code", INSURERS)
def test_a_lost_answer_is_sent_again_under_the_same_reference_and_cancels_once(
    agents, sandbox, quick_cancel_policy, code
):
    """The insurer cancels, then drops the answer: the next try sends the same reference and
    reads the first result; the insurer holds one cancellation."""
    policy = issued(agents, code)
    sandbox[code].state.add_faults([{"operation": "cancel_policy", "fault": "commit_then_drop", "drop": "reset"}])
    cancellation = start(agents, policy)
    reference = cancellation.reference
    done = run_to_the_end(cancellation)
    assert done.state == WorkState.SUBMITTED, (done.provider_code, done.error_message)
    assert done.reference == reference
    assert cancellations_at(sandbox, code, policy.policy_no) == 1
    assert sandbox[code].state.counts()["received"]["cancel_policy"] == 2


def test_a_refusal_fails_with_the_reason_and_leaves_the_policy_in_force(agents, sandbox, quick_cancel_policy):
    policy = issued(agents, "anka")
    sandbox["anka"].state.add_faults([{"operation": "cancel_policy", "fault": "error", "code": "CANCEL_NOT_ALLOWED"}])
    done = run_to_the_end(start(agents, policy))
    assert done.state == WorkState.FAILED and done.error_message
    assert Policy.objects.get(pk=policy.pk).status == Policy.Status.ACTIVE
    assert cancellations_at(sandbox, "anka", policy.policy_no) == 0


@pytest.mark.parametrize("code", ["bogazici", "deniz"])
def test_an_unknown_outcome_waits_deferred_and_a_replay_asks_under_the_same_reference(
    agents, sandbox, quick_cancel_policy, code
):
    policy = issued(agents, code)
    sandbox[code].state.add_faults(
        [
            {"operation": "cancel_policy", "fault": "commit_then_drop", "drop": "reset"},
            {"operation": "cancel_policy", "fault": "html", "http_status": 502, "times": None},
        ]
    )
    cancellation = run_to_the_end(start(agents, policy))
    assert cancellation.state == WorkState.DEFERRED and cancellation.maybe_sent
    assert "Sonuç bilinmiyor" in cancellation.error_message
    sandbox[code].state.clear_faults()
    assert dead_letters_replay(model=Cancellation, ids=[cancellation.pk]) == [cancellation.pk]
    done = run_to_the_end(Cancellation.objects.get(pk=cancellation.pk))
    assert done.state == WorkState.SUBMITTED and done.reference == cancellation.reference
    assert cancellations_at(sandbox, code, policy.policy_no) == 1


def test_the_desk_shows_the_estimate_then_the_insurers_refund(agents, sandbox, quick_cancel_policy, desk):
    policy = issued(agents, "cinar")
    page = desk.get(f"/policeler/{policy.pk}/").content.decode()
    assert "Poliçeyi iptal et" in page
    estimate = desk.post(
        f"/policeler/{policy.pk}/iptal/",
        {"reason": "duplicate", "effective_on": policy.starts_on.isoformat(), "action": "estimate"},
    )
    assert estimate.status_code == 200 and "Tahmini iade primi" in estimate.content.decode()
    assert not Cancellation.objects.exists()
    response = desk.post(
        f"/policeler/{policy.pk}/iptal/",
        {"reason": "duplicate", "effective_on": policy.starts_on.isoformat(), "action": "confirm"},
    )
    cancellation = Cancellation.objects.get(policy=policy)
    assert response.status_code == 302 and response["Location"] == f"/iptaller/{cancellation.pk}/"
    run_to_the_end(cancellation)
    status = desk.get(f"/iptaller/{cancellation.pk}/durum/").content.decode()
    assert "Poliçe iptal edildi" in status and 'data-state="SUBMITTED"' in status


def test_the_api_cancels_and_a_repeat_answers_the_same_cancellation(agents, sandbox, quick_cancel_policy):

    policy = issued(agents, "deniz")
    client = api_as(agents["ACENTE1"])
    body = {"reason": "vehicle_sold", "effective_on": policy.starts_on.isoformat()}
    first = client.post(f"/api/policies/{policy.pk}/cancel/", body, format="json")
    assert first.status_code == 202, first.content
    again = client.post(f"/api/policies/{policy.pk}/cancel/", body, format="json")
    assert again.status_code == 200 and again.json()["id"] == first.json()["id"]
    bad = client.post(f"/api/policies/{policy.pk}/cancel/", {"reason": "stolen"}, format="json")
    assert bad.status_code == 400 and "reason" in bad.json()  # the field is named, nothing started
    other = api_as(agents["ACENTE2"])
    assert other.post(f"/api/policies/{policy.pk}/cancel/", body, format="json").status_code == 404
    run_to_the_end(Cancellation.objects.get(pk=first.json()["id"]))
    detail = client.get(f"/api/cancellations/{first.json()['id']}/").json()
    assert detail["state"] == "SUBMITTED" and detail["refund"] is not None
