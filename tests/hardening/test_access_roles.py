"""Access beyond agency isolation: a deactivated agency, the operator permissions, API throttles.

Companion of test_isolation_matrix.py: there the question is "whose objects", here "may this
login act at all", through every door (desk login, admin login, API token, a live session).
"""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.test import Client
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from agencies.models import Agency
from quotes.models import Issuance, QuoteRequest
from quotes.services.issuance import IssuanceRefused, issuance_start
from quotes.services.quote_requests import quote_request_create
from tests import samples
from tests.hardening.conftest import PASSWORD
from tests.hardening.test_isolation_matrix import agency_objects

pytestmark = pytest.mark.django_db


def deactivate(code: str) -> None:
    Agency.objects.filter(code=code).update(is_active=False)


def permission(app_label: str, codename: str) -> Permission:
    return Permission.objects.get(content_type__app_label=app_label, codename=codename)


# --- a deactivated agency ---------------------------------------------------------------------------


def test_deactivated_agencys_agent_cannot_log_in_anywhere(agents):
    """Desk login, admin login and the API token endpoint all refuse the right password."""
    agent = agents["ACENTE1"]
    agent.is_staff = True  # so that only the agency, not the staff flag, keeps them out of the admin
    agent.save()
    deactivate("ACENTE1")
    desk = Client()
    response = desk.post("/giris/", {"username": agent.username, "password": PASSWORD})
    assert response.status_code == 200 and "_auth_user_id" not in desk.session
    admin = Client()
    admin.post("/admin/login/?next=/admin/", {"username": agent.username, "password": PASSWORD})
    assert "_auth_user_id" not in admin.session
    response = APIClient().post("/api/auth/token/", {"username": agent.username, "password": PASSWORD})
    assert response.status_code == 400 and not Token.objects.filter(user=agent).exists()
    # The same doors open for the other agency's agent: the refusal is the agency, not the door.
    other = Client()
    assert other.post("/giris/", {"username": agents["ACENTE2"].username, "password": PASSWORD}).status_code == 302


def test_session_and_token_stop_when_the_agency_is_deactivated(agents):
    """An agency switched off mid-session: the next desk page is the login, API calls are refused."""
    agent = agents["ACENTE1"]
    desk, api_session, api_token = Client(), Client(), APIClient()
    desk.force_login(agent)
    api_session.force_login(agent)
    api_token.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=agent).key}")
    assert desk.get("/talepler/").status_code == 200 and api_token.get("/api/quote-requests/").status_code == 200
    deactivate("ACENTE1")
    response = desk.get("/talepler/")
    assert response.status_code == 302 and response["Location"].startswith("/giris/")
    assert api_session.get("/api/quote-requests/").status_code in (401, 403)
    response = api_token.post("/api/quote-requests/", {"product": "trafik", "data": samples.TRAFIK}, format="json")
    assert response.status_code == 403 and "pasif" in response.json()["detail"]
    assert not QuoteRequest.objects.exists()


def test_services_use_no_account_of_a_deactivated_agency(agents):
    """Quote fan-out and issuance refuse at their entry points, in Turkish, storing nothing."""
    objects = agency_objects(agents["ACENTE1"])
    deactivate("ACENTE1")
    agents["ACENTE1"].agent_profile.agency.refresh_from_db()
    before = QuoteRequest.objects.count()
    with pytest.raises(PermissionError, match="pasif"):
        quote_request_create(user=agents["ACENTE1"], product="trafik", data=samples.TRAFIK)
    with pytest.raises(IssuanceRefused, match="pasif"):
        issuance_start(user=agents["ACENTE1"], insurer_quote_id=objects.quote.pk, payment_token=samples.PAYMENT_TOKEN)
    assert QuoteRequest.objects.count() == before
    assert not Issuance.objects.filter(insurer_quote=objects.quote).exists()


def test_agent_switched_off_by_their_agency_admin_is_logged_out(agents):
    """The agency admin's "Pasifleştir" ends that agent's session and token at their next call."""
    admin_profile = agents["ACENTE1"].agent_profile
    admin_profile.is_agency_admin = True
    admin_profile.save()
    agent = get_user_model().objects.create_user("ajan-gecici", password=PASSWORD)
    from agencies.models import AgentProfile

    profile = AgentProfile.objects.create(user=agent, agency=admin_profile.agency)
    desk, api = Client(), APIClient()
    desk.force_login(agent)
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=agent).key}")
    admin = Client()
    admin.force_login(agents["ACENTE1"])
    assert admin.post(f"/acente/calisanlar/{profile.pk}/durum/", {"aktif": "0"}).status_code == 302
    assert desk.get("/talepler/")["Location"].startswith("/giris/")
    assert api.get("/api/quote-requests/").status_code == 401


# --- operator permissions -------------------------------------------------------------------------


def test_dashboard_and_metrics_need_view_attempt_not_just_staff(client, settings):
    """A bare staff login gets 403 on the dashboard and /metrics; `integrations.view_attempt` opens both."""
    settings.METRICS_TOKEN = "kazan-9f2c"
    staff = get_user_model().objects.create_user("personel", password=PASSWORD, is_staff=True)
    client.force_login(staff)
    assert client.get("/admin/integrations/health/").status_code == 403
    assert client.get("/metrics").status_code == 403
    staff.user_permissions.add(permission("integrations", "view_attempt"))
    assert client.get("/admin/integrations/health/").status_code == 200
    response = client.get("/metrics")
    assert response.status_code == 200 and b"insurehub_" in response.content


@pytest.mark.parametrize("configured", ["kazan-9f2c", ""])
@pytest.mark.parametrize("presented", ["kazan-9f2ç", "ğüşiöç", "kazan-9f2c\u00a0x"])
def test_metrics_non_ascii_bearer_token_is_401(client, settings, configured, presented):
    """A token with non-ASCII characters is a wrong token (401), never a 500."""
    settings.METRICS_TOKEN = configured
    response = client.get("/metrics", HTTP_AUTHORIZATION=f"Bearer {presented}")
    assert response.status_code == 401 and b"insurehub_" not in response.content


def test_metrics_right_token_still_works(client, settings):
    settings.METRICS_TOKEN = "kazan-9f2c"
    assert client.get("/metrics", HTTP_AUTHORIZATION="Bearer kazan-9f2c").status_code == 200


# --- API throttles --------------------------------------------------------------------------------


def _token_client(user) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.get_or_create(user=user)[0].key}")
    return client


def _ask(client: APIClient):
    # An invalid body: the throttle counts the call before validation, and no insurer is asked.
    return client.post("/api/quote-requests/", {"product": "trafik", "data": {}}, format="json")


def test_quote_creation_is_throttled_per_user_with_retry_after(agents, settings):
    """The third ask within a minute over a 2/min user rate: 429, Retry-After, a Turkish message."""
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {"quote_create_user": "2/min", "quote_create_agency": "100/min"},
    }
    client = _token_client(agents["ACENTE1"])
    assert [_ask(client).status_code for _ in range(2)] == [400, 400]
    response = _ask(client)
    assert response.status_code == 429
    assert 1 <= int(response["Retry-After"]) <= 60
    assert response.json()["detail"].startswith("Çok fazla istek") and "Expected" not in response.json()["detail"]
    # Reading is not throttled, and another user has their own allowance.
    assert client.get("/api/quote-requests/").status_code == 200
    assert _ask(_token_client(agents["ACENTE2"])).status_code == 400


def test_quote_creation_is_throttled_per_agency(agents, settings):
    """Agents of one agency share its allowance; another agency's agents are not slowed by it."""
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {"quote_create_user": "100/min", "quote_create_agency": "3/min"},
    }
    from agencies.models import AgentProfile

    colleague = get_user_model().objects.create_user("ajan-acente1-b", password=PASSWORD)
    AgentProfile.objects.create(user=colleague, agency=agents["ACENTE1"].agent_profile.agency)
    first, second = _token_client(agents["ACENTE1"]), _token_client(colleague)
    assert [_ask(c).status_code for c in (first, second, first)] == [400, 400, 400]
    response = _ask(second)
    assert response.status_code == 429 and int(response["Retry-After"]) >= 1
    assert _ask(_token_client(agents["ACENTE2"])).status_code == 400


def test_throttle_rates_come_from_the_environment():
    """API_QUOTE_RATE_PER_USER / _PER_AGENCY set the rates (read once, by the settings module)."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "API_QUOTE_RATE_PER_USER": "7/hour", "API_QUOTE_RATE_PER_AGENCY": "70/hour"}
    code = (
        "import django; django.setup(); from django.conf import settings as s; "
        "print(s.REST_FRAMEWORK['DEFAULT_THROTTLE_RATES'])"
    )
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    assert "'quote_create_user': '7/hour'" in out and "'quote_create_agency': '70/hour'" in out
