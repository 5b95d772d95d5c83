"""Sending the offer from the quote request page: only on a channel the customer consents to;
by e-mail with the PDF attached, by SMS (through the Netgsm stand-in) with a signed link that
opens the offer without a login, expires, and is refused when tampered with; every message kept."""

from __future__ import annotations

import io
import re
import time

import pytest
from django.core import mail, signing
from django.test import Client
from django.urls import reverse
from pypdf import PdfReader

from outreach.models import OutboundMessage
from outreach.services.offer import LINK_SALT
from tests import samples
from tests.outreach.conftest import offered_request
from tests.outreach.test_consent import record

pytestmark = pytest.mark.django_db

LINK = re.compile(r"https?://[^\s]+(/teklif/[^\s/]+/)")


def send(client: Client, request, channel: str):
    response = client.post(reverse("offer_send", args=[request.public_id]), {"channel": channel})
    assert response.status_code == 302, response.status_code
    return client.get(response["Location"]).content.decode()


def test_without_consent_the_offer_is_refused_naming_the_channel(desk, customer, netgsm):
    """No consent recorded, then SMS consent withdrawn: refused in Turkish, nothing stored or sent."""
    request = offered_request(customer)
    page = send(desk, request, "sms")
    assert "Müşterinin SMS izni yok" in page
    record(desk, customer, "sms", "give")
    record(desk, customer, "sms", "withdraw")
    page = send(desk, request, "sms")
    assert "Müşterinin SMS izni yok" in page
    assert "Müşterinin e-posta izni yok" in send(desk, request, "email")
    assert not OutboundMessage.objects.exists() and not netgsm.state.received and not mail.outbox


def test_email_goes_with_the_offer_pdf_attached(desk, customer):
    record(desk, customer, "email", "give", "in_person")
    request = offered_request(customer)
    page = send(desk, request, "email")
    assert "Teklif e-posta ile gönderildi: a***@example.com" in page
    (sent,) = mail.outbox
    assert sent.to == ["ayse.yilmaz@example.com"] and sent.reply_to == ["iletisim@acente1.example"]
    assert "Sayın Ayşe Yılmaz" in sent.body and "0212 555 01 02" in sent.body
    (filename, content, mimetype) = sent.attachments[0]
    assert mimetype == "application/pdf" and re.fullmatch(r"teklif-trafik-\d{8}\.pdf", filename)
    text = "".join(page.extract_text() for page in PdfReader(io.BytesIO(content)).pages)
    assert "34 ABC 123" in text and "Ayşe Yılmaz" in text
    message = OutboundMessage.objects.get()
    assert (message.kind, message.channel, message.status) == ("offer", "email", "sent")
    assert message.recipient == "a***@example.com" and message.sent_by.agent_profile.agency == customer.agency
    assert "a***@example.com" in desk.get(reverse("customer_detail", args=[customer.pk])).content.decode()


def test_sms_goes_through_netgsm_with_a_link_that_opens_without_login(desk, customer, netgsm):
    record(desk, customer, "sms", "give", "phone")
    request = offered_request(customer)
    page = send(desk, request, "sms")
    assert "Teklif SMS ile gönderildi: 0532 *** ** 67" in page
    (received,) = netgsm.state.received
    assert received.params["gsmno"] == "5321234567" and received.params["dil"] == "TR"
    assert received.params["msgheader"] == "ACENTE1"
    text = received.params["message"]
    assert "Trafik sigorta teklifiniz hazır" in text and "0212 555 01 02" in text
    # The link names no identity number, and no id of the request either.
    assert samples.TRAFIK["owner_id"] not in text and str(request.public_id) not in text
    message = OutboundMessage.objects.get()
    assert (message.status, message.provider, message.provider_code) == ("sent", "netgsm", "00")
    assert message.provider_message_id.isdigit() and message.provider_answer.startswith("00 ")
    path = LINK.search(text).group(1)

    anonymous = Client()
    shown = anonymous.get(path)
    body = shown.content.decode()
    assert shown.status_code == 200 and "Ayşe Yılmaz" in body and "34 ABC 123" in body and "4.312,50 ₺" in body
    assert samples.TRAFIK["owner_id"] not in body
    pdf = anonymous.get(path + "indir/")
    assert pdf.status_code == 200 and pdf["Content-Type"] == "application/pdf"
    assert re.search(r'filename="teklif-trafik-\d{8}\.pdf"', pdf["Content-Disposition"])


def test_a_tampered_or_made_up_link_is_a_turkish_404(desk, customer, netgsm):
    record(desk, customer, "sms", "give")
    send(desk, offered_request(customer), "sms")
    path = LINK.search(netgsm.state.received[0].params["message"]).group(1)
    token = path.split("/")[2]
    forged = signing.TimestampSigner(salt="another-salt").sign(OutboundMessage.objects.get().public_id.hex)
    for bad in (token[:-1] + ("A" if token[-1] != "A" else "B"), "x1", forged, token.split(":")[0], "a:b:c"):
        response = Client().get(f"/teklif/{bad}/")
        assert response.status_code == 404, bad
        assert "Sayfa bulunamadı" in response.content.decode()
        assert Client().get(f"/teklif/{bad}/indir/").status_code == 404


def test_an_expired_link_is_a_turkish_410(desk, customer, netgsm, monkeypatch):
    """A link signed eight days ago (the limit is seven): 410 with a Turkish page, page and PDF."""
    record(desk, customer, "sms", "give")
    send(desk, offered_request(customer), "sms")
    message = OutboundMessage.objects.get()
    monkeypatch.setattr(
        signing.TimestampSigner, "timestamp", lambda self: signing.b62_encode(int(time.time()) - 8 * 86400)
    )
    old = signing.TimestampSigner(salt=LINK_SALT).sign(str(message.public_id))
    monkeypatch.undo()
    for suffix in ("", "indir/"):
        response = Client().get(f"/teklif/{old}/{suffix}")
        assert response.status_code == 410
        assert "Bağlantının süresi doldu" in response.content.decode()


def test_a_provider_refusal_is_stored_failed_with_its_code_and_reason(desk, customer, netgsm, settings):
    """A wrong password: Netgsm answers "30" with HTTP 200; the message is failed, code and reason kept."""
    settings.NETGSM_PASSWORD = "yanlis"
    record(desk, customer, "sms", "give")
    request = offered_request(customer)
    page = send(desk, request, "sms")
    assert "Teklif gönderilemedi" in page and "kod 30" in page
    message = OutboundMessage.objects.get()
    assert (message.status, message.provider_code, message.provider_answer) == ("failed", "30", "30")
    assert "şifreyi kabul etmedi" in message.error
    assert "yanlis" not in message.provider_answer + message.error + message.body
    # The link of a message that never went opens nothing.
    token = re.search(r"/teklif/([^\s/]+)/", message.body).group(1)
    assert Client().get(f"/teklif/{token}/").status_code == 404
    assert "Gönderilemedi" in desk.get(reverse("quote_request_detail", args=[request.public_id])).content.decode()


def test_another_agency_cannot_send_or_download_the_offer(other_desk, desk, customer):
    record(desk, customer, "email", "give")
    request = offered_request(customer)
    assert other_desk.post(reverse("offer_send", args=[request.public_id]), {"channel": "email"}).status_code == 404
    assert other_desk.get(reverse("offer_download", args=[request.public_id])).status_code == 404
    assert not mail.outbox and not OutboundMessage.objects.exists()
    assert desk.get(reverse("offer_download", args=[request.public_id])).status_code == 200


def test_erasing_the_customer_scrubs_the_texts_and_closes_the_link(desk, agents, customer, netgsm):
    """KVKK erasure: the sent messages' texts (the name, the link) go; the rows stay; the link 404s."""
    from customers.erasure import customer_erase
    from outreach.receivers import ERASED_TEXT

    record(desk, customer, "sms", "give")
    record(desk, customer, "email", "give")
    request = offered_request(customer)
    send(desk, request, "sms")
    send(desk, request, "email")
    path = LINK.search(netgsm.state.received[0].params["message"]).group(1)
    assert Client().get(path).status_code == 200
    customer_erase(customer=customer, erased_by=agents["ACENTE1"], request_note="Dilekçe 2026/14")
    messages = OutboundMessage.objects.all()
    assert messages.count() == 2 and all(m.body == ERASED_TEXT and m.subject == "" for m in messages)
    assert Client().get(path).status_code == 404


def test_a_mail_server_that_refuses_is_a_failed_message_not_a_500(desk, customer, settings):
    """SMTP on a loopback port nobody listens on: the real connection is refused, the message kept."""
    import socket

    with socket.socket() as probe:  # a free port, closed again before the send
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT, settings.EMAIL_USE_TLS, settings.EMAIL_TIMEOUT = (
        "127.0.0.1",
        port,
        False,
        2,
    )
    record(desk, customer, "email", "give")
    page = send(desk, offered_request(customer), "email")
    message = OutboundMessage.objects.get()
    assert (message.status, message.provider, message.provider_code) == ("failed", "smtp", "ConnectionRefusedError")
    assert "E-posta sunucusu iletiyi kabul etmedi ya da ulaşılamadı." in page
