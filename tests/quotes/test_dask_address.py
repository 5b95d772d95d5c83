"""DASK's address step: the UAVT code's address shown and confirmed before any quote is asked,
against the sandbox insurers over real HTTP (the sandbox knows every code except those that
start with 9)."""

from __future__ import annotations

import re

import pytest
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from integrations.adapters.registry import registered_codes
from integrations.models import Attempt, Insurer
from quotes.models import InsurerQuote, QuoteRequest
from quotes.selectors import OUTCOME_REFUSED, quote_request_list
from quotes.services.dask_address import (
    ADDRESS_UNKNOWN_HERE_MESSAGE,
    NO_SUCH_ADDRESS_MESSAGE,
    dask_address_check,
)
from quotes.services.quote_requests import (
    ADDRESS_NOT_FOUND_MESSAGE,
    InputInvalid,
    insurer_quote_fetch,
    quote_request_create,
)
from sandbox.domain import address_for
from tests import samples
from tests.conftest import api_as

pytestmark = pytest.mark.django_db

KNOWN = "1234567890"
UNKNOWN = "9234567890"  # the sandbox's register has no code starting with 9


def dask_form(uavt_code: str, **extra: str) -> dict[str, str]:
    return {"uavt_code": uavt_code, **{k: str(v) for k, v in samples.DASK_RISK.items()}, **extra}


def field_error(html: str, field: str) -> str:
    match = re.search(rf'<p class="error" id="id_{field}_error">([^<]*)</p>', html)
    return match.group(1) if match else ""


@pytest.fixture
def desk(agents) -> Client:
    client = Client()
    client.force_login(agents["ACENTE1"])
    return client


def dask_insurers() -> list[str]:
    return sorted(i.name for i in Insurer.objects.all() if i.sells("dask"))


# --- the service -------------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_every_dask_insurer_is_asked_at_once_and_one_address_shown(agents):
    """Outside a transaction the insurers are asked in parallel threads; each call is logged."""
    check = dask_address_check(user=agents["ACENTE1"], uavt_code=" 1234567890 ")
    assert check.uavt_code == KNOWN
    assert check.addresses == [(address_for(KNOWN), dask_insurers())]
    assert check.unanswered == []
    logged = Attempt.objects.filter(operation="dask_address", call="main", reference=f"DASK-ADRES-{KNOWN}")
    assert sorted(logged.values_list("insurer_code", flat=True)) == sorted(
        c for c in registered_codes() if Insurer.objects.get(code=c).sells("dask")
    )


def test_a_code_no_insurer_knows_is_an_error_on_the_uavt_field(agents):
    with pytest.raises(InputInvalid) as refused:
        dask_address_check(user=agents["ACENTE1"], uavt_code=UNKNOWN)
    assert refused.value.errors == {"uavt_code": NO_SUCH_ADDRESS_MESSAGE}


def test_a_malformed_code_is_refused_before_any_call(agents, sandbox):
    with pytest.raises(InputInvalid) as refused:
        dask_address_check(user=agents["ACENTE1"], uavt_code="12345")
    assert refused.value.errors == {"uavt_code": "UAVT kodu 10 haneli olmalıdır."}
    assert all(server.state.counts()["total_received"] == 0 for server in sandbox.values())


def test_an_insurer_that_cannot_answer_is_named_and_the_others_address_shown(agents, sandbox):
    sandbox["anka"].state.add_faults([{"operation": "dask_address", "fault": "error", "code": "NOT_FOUND", "times": 5}])
    sandbox["deniz"].state.add_faults([{"operation": "dask_address", "fault": "html", "http_status": 503,
                                        "times": 10}])  # fmt: skip
    check = dask_address_check(user=agents["ACENTE1"], uavt_code=KNOWN)
    anka, deniz = Insurer.objects.get(code="anka").name, Insurer.objects.get(code="deniz").name
    ((address, insurers),) = check.addresses
    assert address == address_for(KNOWN) and anka not in insurers and deniz not in insurers
    unanswered = {a.insurer_name: a for a in check.unanswered}
    assert unanswered[anka].message == ADDRESS_UNKNOWN_HERE_MESSAGE and unanswered[anka].not_found
    assert "Yanıt alınamadı" in unanswered[deniz].message and not unanswered[deniz].not_found


def test_when_nobody_answers_the_check_says_so_and_refuses_nothing(agents, sandbox):
    for server in sandbox.values():
        server.state.add_faults([{"operation": "dask_address", "fault": "html", "http_status": 503,
                                  "times": 10}])  # fmt: skip
    check = dask_address_check(user=agents["ACENTE1"], uavt_code=KNOWN)
    assert not check.found and len(check.unanswered) == len(dask_insurers())


# --- the desk ----------------------------------------------------------------------------------


def test_the_desk_shows_the_address_first_and_quotes_only_once_it_is_confirmed(desk):
    first = desk.post(reverse("quote_request_new", args=["dask"]), dask_form(KNOWN))
    html = first.content.decode()
    assert first.status_code == 200 and QuoteRequest.objects.count() == 0
    assert address_for(KNOWN) in html and "Adres doğru, teklif al" in html
    assert f'name="confirmed_uavt" value="{KNOWN}"' in html

    confirmed = desk.post(reverse("quote_request_new", args=["dask"]), dask_form(KNOWN, confirmed_uavt=KNOWN))
    assert confirmed.status_code == 302
    assert QuoteRequest.objects.get().input_data["uavt_code"] == KNOWN


def test_a_code_changed_after_its_address_was_shown_is_shown_again(desk):
    other = "1234567891"
    page = desk.post(reverse("quote_request_new", args=["dask"]), dask_form(other, confirmed_uavt=KNOWN))
    html = page.content.decode()
    assert page.status_code == 200 and QuoteRequest.objects.count() == 0
    assert address_for(other) in html and f'name="confirmed_uavt" value="{other}"' in html


def test_an_unknown_code_is_a_field_error_on_the_desk(desk):
    html = desk.post(reverse("quote_request_new", args=["dask"]), dask_form(UNKNOWN)).content.decode()
    assert field_error(html, "uavt_code") == NO_SUCH_ADDRESS_MESSAGE
    assert QuoteRequest.objects.count() == 0


def test_other_fields_are_checked_before_any_insurer_is_asked(desk, sandbox):
    html = desk.post(reverse("quote_request_new", args=["dask"]), dask_form(KNOWN, gross_m2="20")).content.decode()
    assert field_error(html, "gross_m2") == "Brüt alan 40 ile 1000 m² arasında olmalıdır."
    assert all(server.state.counts()["total_received"] == 0 for server in sandbox.values())


# --- the API -----------------------------------------------------------------------------------


def test_the_api_answers_the_address_and_a_field_error_for_an_unknown_code(agents):
    api = api_as(agents["ACENTE1"])
    found = api.post("/api/dask/address/", {"uavt_code": KNOWN}, format="json")
    assert found.status_code == 200
    assert found.json() == {
        "uavt_code": KNOWN,
        "addresses": [{"address": address_for(KNOWN), "insurers": dask_insurers()}],
        "unanswered": [],
    }
    unknown = api.post("/api/dask/address/", {"uavt_code": UNKNOWN}, format="json")
    assert unknown.status_code == 400 and unknown.json() == {"uavt_code": [NO_SUCH_ADDRESS_MESSAGE]}
    assert api.post("/api/dask/address/", {}, format="json").json().keys() == {"uavt_code"}


def test_the_api_needs_a_login():
    assert APIClient().post("/api/dask/address/", {"uavt_code": KNOWN}, format="json").status_code in (401, 403)


# --- what a request that no insurer priced says ----------------------------------------------


def test_a_request_every_insurer_refused_reads_refused_not_no_answer(agents):
    """A DASK request for an unknown code (the API does not require the address step): each row
    says the code is unknown there, and the list says no quote was given, not "no answer"."""
    request = quote_request_create(user=agents["ACENTE1"], product="dask", data=dask_form(UNKNOWN))
    for row in request.insurer_quotes.all():
        insurer_quote_fetch(row.id)
    rows = list(request.insurer_quotes.all())
    assert {row.state for row in rows} == {InsurerQuote.State.FAILED}
    assert {row.message for row in rows} == {ADDRESS_NOT_FOUND_MESSAGE}
    listed = quote_request_list(user=agents["ACENTE1"]).get(pk=request.pk)
    assert listed.outcome == OUTCOME_REFUSED
