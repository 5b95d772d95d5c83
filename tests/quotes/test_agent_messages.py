"""What an agent reads when an insurer says no: plain Turkish from the taxonomy, with the
insurer's own code and words kept under "ayrıntı"; a DASK quote shows the address its UAVT
code resolved to, unmasked, for the agent to confirm with the customer."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from quotes.models import QuoteRequest
from quotes.services import quote_requests as svc
from tests import samples

pytestmark = pytest.mark.django_db


def fetch_all(request: QuoteRequest) -> None:
    for row_id in request.insurer_quotes.values_list("id", flat=True):
        svc.insurer_quote_fetch(row_id)


def rows_of(request: QuoteRequest) -> dict:
    return {row.insurer.code: row for row in request.insurer_quotes.select_related("insurer")}


def desk_html(user, request: QuoteRequest) -> str:
    client = Client()
    client.force_login(user)
    return client.get(reverse("quote_request_detail", args=[request.public_id])).content.decode()


def test_a_field_refusal_names_the_field_in_turkish_and_keeps_the_insurers_words(agents, sandbox):
    """Anka's VALIDATION names `plate`: the agent reads which field, in Turkish; the insurer's
    English message and its code stay under "ayrıntı"."""
    sandbox["anka"].state.add_faults([{"operation": "trafik_quote", "fault": "error", "code": "VALIDATION"}])
    request = svc.quote_request_create(user=agents["ACENTE1"], product="trafik", data=samples.TRAFIK)
    fetch_all(request)
    row = rows_of(request)["anka"]
    assert row.state == "FAILED" and row.provider_code == "VALIDATION"
    assert row.message.startswith("Şirket") and "kabul etmedi" in row.message
    html = desk_html(agents["ACENTE1"], request)
    assert "<summary>ayrıntı</summary>" in html and "<code>VALIDATION</code>" in html


def test_a_business_refusal_reads_the_same_at_every_insurer(agents, sandbox):
    codes = {"anka": "NOT_ELIGIBLE", "bogazici": "BS-300", "cinar": "BIZ_NOT_ELIGIBLE"}
    for code, raw in codes.items():
        sandbox[code].state.add_faults([{"operation": "trafik_quote", "fault": "error", "code": raw}])
    request = svc.quote_request_create(user=agents["ACENTE1"], product="trafik", data=samples.TRAFIK)
    fetch_all(request)
    rows = rows_of(request)
    assert {rows[code].message for code in codes} == {"Araç teminata uygun değil"}
    assert {rows[code].provider_code for code in codes} == set(codes.values())


def test_an_unclassified_code_is_no_answer_with_its_raw_code_visible(agents, sandbox):
    sandbox["cinar"].state.add_faults(
        [{"operation": "trafik_quote", "fault": "error", "code": "XYZ_NEW_CODE", "times": 10}]
    )
    request = svc.quote_request_create(user=agents["ACENTE1"], product="trafik", data=samples.TRAFIK)
    fetch_all(request)
    row = rows_of(request)["cinar"]
    assert row.state == "NO_ANSWER" and row.provider_code == "XYZ_NEW_CODE"
    assert "beklenmeyen" in row.message
    assert "<code>XYZ_NEW_CODE</code>" in desk_html(agents["ACENTE1"], request)


def test_dask_shows_the_address_the_uavt_code_resolves_to_unmasked(agents, sandbox):
    data = {**samples.DASK_RISK, **samples.DASK_ADDRESS}
    request = svc.quote_request_create(user=agents["ACENTE1"], product="dask", data=data)
    fetch_all(request)
    html = desk_html(agents["ACENTE1"], request)
    from sandbox import domain

    address = domain.address_for(samples.DASK_ADDRESS["uavt_code"])
    for row in rows_of(request).values():
        assert row.details["address"] == address
    assert f"Adres: {address}" in html
    assert samples.DASK_ADDRESS["uavt_code"] in html


def test_a_call_refused_on_our_side_for_the_contract_says_so(agents, sandbox):
    """The agency's send slots at Anka are taken far past the quote's deadline: the call is not
    sent, and the agent reads that the insurer is busy and nothing went out, not a failure."""
    import time

    from integrations.models import InsurerAccount, SendRateState

    account = InsurerAccount.objects.get(agency__code="ACENTE1", insurer__code="anka")
    now = time.time()
    SendRateState.objects.update_or_create(
        account_key=account.rate_key,
        defaults={"rate": 5.0, "known_good": 5.0, "tat": now + 1000, "window_started": now},
    )
    request = svc.quote_request_create(user=agents["ACENTE1"], product="trafik", data=samples.TRAFIK)
    fetch_all(request)
    row = rows_of(request)["anka"]
    assert (row.state, row.provider_code, row.error_kind) == ("NO_ANSWER", "LOCAL_RATE_LIMIT", "throttled")
    assert row.message.startswith("Sigorta şirketi şu an yoğun") and "gönderilmedi" in row.message
    assert sandbox["anka"].state.counts()["total_received"] == 0
    assert "Sigorta şirketi şu an yoğun" in desk_html(agents["ACENTE1"], request)


def test_a_refusal_in_the_same_words_as_the_insurers_is_said_once(agents, sandbox, quick_issuance_policy):
    """Boğaziçi's BS-310 is our "Risk kabul edilmedi" too: the results row, the issuance's reason
    and its status page say it once, never "Risk kabul edilmedi (Risk kabul edilmedi)"."""
    import re

    from quotes.services import issuance as issuance_svc

    sandbox["bogazici"].state.add_faults([{"operation": "trafik_quote", "fault": "error", "code": "BS-310"}])
    request = svc.quote_request_create(user=agents["ACENTE1"], product="trafik", data=samples.TRAFIK)
    fetch_all(request)
    refused = rows_of(request)["bogazici"]
    assert refused.state == "FAILED" and refused.message == refused.provider_message == "Risk kabul edilmedi"
    html = desk_html(agents["ACENTE1"], request)
    row = re.search(r'<tr class="result[^"]*" data-insurer="bogazici".*?</tr>', html, re.S).group(0)
    assert row.count("Risk kabul edilmedi") == 1 and "<code>BS-310</code>" in row

    sandbox["anka"].state.add_faults([{"operation": "issue_policy", "fault": "error", "code": "RISK_DECLINED"}])
    issuance = issuance_svc.issuance_start(
        user=agents["ACENTE1"], insurer_quote_id=rows_of(request)["anka"].pk, payment_token=samples.PAYMENT_TOKEN
    )
    assert issuance_svc.issuance_process(issuance.pk) == "FAILED"
    issuance.refresh_from_db()
    assert issuance.error_message == "Risk kabul edilmedi"
    client = Client()
    client.force_login(agents["ACENTE1"])
    status = client.get(reverse("issuance_detail", args=[issuance.pk])).content.decode()
    assert status.count("Risk kabul edilmedi") == 1
