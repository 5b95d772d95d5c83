"""What an agent sees when something is missing, forbidden or broken: Turkish pages, never
Django's debug page listing every URL, and a favicon rather than a 404 in every log."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.test import Client, RequestFactory
from django.views.defaults import server_error

from agencies.models import Agency, AgentProfile

pytestmark = pytest.mark.django_db


@pytest.fixture
def agent_client() -> Client:
    agency = Agency.objects.create(code="HATA1", name="Hata Acentesi")
    user = get_user_model().objects.create_user("hata-ajan", password="test-pass-123")
    AgentProfile.objects.create(user=user, agency=agency)
    client = Client()
    client.force_login(user)
    return client


def test_an_unknown_address_answers_the_turkish_404_page(agent_client):
    response = agent_client.get("/boyle-bir-sayfa-yok/")
    html = response.content.decode()
    assert response.status_code == 404
    assert "Sayfa bulunamadı" in html and "Teklif masasına dönün" in html
    assert "URLconf" not in html and "urlpatterns" not in html


def test_a_forbidden_page_answers_the_turkish_403_page(agent_client):
    """An agent who is not the agency's admin opens the agency admin's page."""
    response = agent_client.get("/acente/calisanlar/")
    assert response.status_code == 403
    assert "Bu işlem için yetkiniz yok" in response.content.decode()


def test_a_form_without_its_csrf_token_answers_the_turkish_403_page(agent_client):
    agent_client.handler.enforce_csrf_checks = True
    response = agent_client.post("/teklif/yeni/trafik/", {"plate": "34ABC123"})
    assert response.status_code == 403
    assert "Form süresi doldu" in response.content.decode()


def test_the_500_page_is_turkish_and_needs_nothing_that_could_fail_too():
    response = server_error(RequestFactory().get("/"))
    html = response.content.decode()
    assert response.status_code == 500
    assert "Beklenmeyen bir hata oluştu" in html and 'lang="tr"' in html


def test_favicon_is_served_not_a_404(client):
    response = client.get("/favicon.ico")
    assert response.status_code == 301 and response["Location"].endswith("favicon.svg")
    page = client.get("/giris/").content.decode()
    assert 'rel="icon"' in page and "favicon.svg" in page
