"""The policy's PDF on the desk: served only through the view, to the policy's agency (or a
head-office reader); the state fragment; "Yeniden al"."""

from __future__ import annotations

import hashlib

import pytest
from django.template import Context, Template
from django.test import RequestFactory

from documents import services
from documents.models import PolicyDocument

pytestmark = pytest.mark.django_db


def download_url(policy) -> str:
    return f"/policeler/{policy.pk}/belge/"


def refetch_url(policy) -> str:
    return f"/policeler/{policy.pk}/belge/yenile/"


@pytest.fixture
def stored(issue):
    """An anka policy of ACENTE1 whose PDF has been fetched."""
    policy = issue("anka")
    document = services.document_request(policy=policy)
    assert services.document_process(document.pk) == "SUBMITTED"
    return policy


def test_own_agency_downloads_the_pdf_as_an_attachment(client, agents, stored):
    """200 application/pdf, as an attachment with a safe name, bytes matching the stored SHA-256."""
    client.force_login(agents["ACENTE1"])
    response = client.get(download_url(stored))
    assert response.status_code == 200
    assert response["Content-Type"] == "application/pdf"
    assert response["Content-Disposition"] == f'attachment; filename="police-anka-{stored.policy_no}.pdf"'
    assert response["Cache-Control"] == "private, no-store"
    content = b"".join(response.streaming_content)
    assert hashlib.sha256(content).hexdigest() == PolicyDocument.objects.get(policy=stored).sha256


def test_other_agency_gets_404(client, agents, stored):
    """Another agency's agent cannot tell the policy exists."""
    client.force_login(agents["ACENTE2"])
    assert client.get(download_url(stored)).status_code == 404
    assert client.post(refetch_url(stored)).status_code == 404
    assert PolicyDocument.objects.get(policy=stored).state == "SUBMITTED"


def test_anonymous_is_sent_to_login(client, stored):
    response = client.get(download_url(stored))
    assert response.status_code == 302 and response["Location"].startswith("/giris/")


def test_head_office_reads_but_does_not_refetch(client, head_office, stored):
    """`quotes.view_all_agencies` downloads any agency's PDF; a re-fetch stays the agency's own."""
    client.force_login(head_office)
    assert client.get(download_url(stored)).status_code == 200
    assert client.post(refetch_url(stored)).status_code == 404
    assert PolicyDocument.objects.get(policy=stored).state == "SUBMITTED"


def test_no_file_yet_is_404(client, agents, issue):
    """While the PDF is being prepared there is nothing to download."""
    policy = issue("anka")
    services.document_request(policy=policy)
    client.force_login(agents["ACENTE1"])
    assert client.get(download_url(policy)).status_code == 404


def test_refetch_button_queues_the_fetch_and_returns_to_the_page(client, agents, stored):
    """Without htmx the button posts and comes back to the page it was on."""
    client.force_login(agents["ACENTE1"])
    response = client.post(refetch_url(stored), {"next": "/policeler/"})
    assert response.status_code == 302 and response["Location"] == "/policeler/"
    assert PolicyDocument.objects.get(policy=stored).state == "QUEUED"
    # The previous PDF is still served while the new one is fetched.
    assert client.get(download_url(stored)).status_code == 200


def test_refetch_never_redirects_off_site(client, agents, stored):
    client.force_login(agents["ACENTE1"])
    response = client.post(refetch_url(stored), {"next": "https://evil.example/"})
    assert response["Location"] == "/policeler/"


def test_refetch_with_htmx_answers_the_fragment(client, agents, stored):
    client.force_login(agents["ACENTE1"])
    response = client.post(
        refetch_url(stored), HTTP_HX_REQUEST="true", HTTP_HX_CURRENT_URL="http://testserver/policeler/"
    )
    assert response.status_code == 200
    html = response.content.decode()
    assert 'data-state="QUEUED"' in html and "İndir" in html and "yenileniyor" in html
    assert "hx-get" in html  # it polls until the new PDF is in


def test_refetch_is_post_only(client, agents, stored):
    client.force_login(agents["ACENTE1"])
    assert client.get(refetch_url(stored)).status_code == 405


def render_status(policy, user) -> str:
    request = RequestFactory().get("/policeler/")
    request.user = user
    template = Template("{% load policy_documents %}{% document_status policy %}")
    return template.render(Context({"policy": policy, "request": request}))


def test_status_fragment_shows_each_state(agents, issue, head_office, sandbox):
    """Hazırlanıyor while fetching; İndir once stored; Alınamadı with Yeniden al after a refusal."""
    sandbox["anka"].state.configure(document_delay_seconds=5)
    policy = issue("anka")
    assert "Belgeyi al" in render_status(policy, agents["ACENTE1"])  # no record yet
    document = services.document_request(policy=policy)
    services.document_process(document.pk)  # not ready yet: PENDING
    html = render_status(policy, agents["ACENTE1"])
    assert "Hazırlanıyor" in html and "Yeniden al" not in html
    PolicyDocument.objects.filter(pk=document.pk).update(state="FAILED", error_message="Poliçe bulunamadı")
    html = render_status(policy, agents["ACENTE1"])
    assert "Alınamadı" in html and "Yeniden al" in html
    assert "Yeniden al" not in render_status(policy, head_office)


def test_status_poll_answers_the_fragment(client, agents, stored):
    client.force_login(agents["ACENTE1"])
    response = client.get(f"/policeler/{stored.pk}/belge/durum/")
    assert response.status_code == 200 and 'data-state="SUBMITTED"' in response.content.decode()
    client.force_login(agents["ACENTE2"])
    assert client.get(f"/policeler/{stored.pk}/belge/durum/").status_code == 404
