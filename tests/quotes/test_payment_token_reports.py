"""A payment token is starred out of every error report of the requests that carry one."""

from __future__ import annotations

import pytest
from django.views.debug import SafeExceptionReporterFilter

from tests.conftest import api_as
from tests.quotes.request_samples import tasks_not_sent

TOKEN = "tok_4242_secret_card"

pytestmark = pytest.mark.django_db


@pytest.fixture
def quote_pk(agents, sandbox, monkeypatch) -> int:
    from tests.quotes.test_issuance import quoted

    tasks_not_sent(monkeypatch)
    return quoted(agents, "anka").pk


def test_the_desk_confirm_step_stars_the_token_in_an_error_report(desk, quote_pk):
    """The 500 mail or a debug page of the confirm POST shows the token starred."""
    response = desk.post(f"/teklifler/{quote_pk}/policelestir/", {"payment_token": TOKEN + "x" * 200})
    assert response.status_code == 200  # too long: refused on the form, nothing issued
    shown = SafeExceptionReporterFilter().get_post_parameters(response.wsgi_request)
    assert shown["payment_token"] != TOKEN + "x" * 200 and set(shown["payment_token"]) == {"*"}


def test_the_issue_api_stars_a_form_encoded_token_in_an_error_report(agents, quote_pk):
    """The API takes the token in JSON or as a form; a form body's token is starred in a report."""
    client = api_as(agents["ACENTE1"])
    response = client.post(f"/api/insurer-quotes/{quote_pk}/issue/", {"payment_token": TOKEN + "x" * 200})
    assert response.status_code == 400  # too long: refused, nothing issued
    shown = SafeExceptionReporterFilter().get_post_parameters(response.wsgi_request)
    assert set(shown["payment_token"]) == {"*"}
