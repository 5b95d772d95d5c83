"""The Netgsm backend against the loopback stand-in (real HTTP): what goes on the wire, and each
kind of refusal as a failed result carrying Netgsm's raw code and a Turkish reason."""

from __future__ import annotations

import logging

import pytest

from outreach.sms import mask_phone, sms_backend
from outreach.sms.console import ConsoleBackend
from outreach.sms.netgsm import NetgsmBackend, parse_answer
from tests.outreach.netgsm_standin import SAME_NUMBER_LIMIT, NetgsmStandIn

PHONE = "+905321234567"


def test_a_message_taken_answers_its_bulk_id(netgsm):
    result = sms_backend().send(to=PHONE, text="Teklifiniz hazır: ğüşiöç İ")
    assert result.ok and result.code == "00" and result.message_id == "1310000001"
    (received,) = netgsm.state.received
    assert received.params == {
        "usercode": "8503330000",
        "password": "gizli-Şifre-42",
        "gsmno": "5321234567",
        "message": "Teklifiniz hazır: ğüşiöç İ",
        "msgheader": "ACENTE1",
        "dil": "TR",
    }


@pytest.mark.parametrize(
    ("setting", "value", "code", "words"),
    [
        ("NETGSM_PASSWORD", "yanlis", "30", "şifreyi kabul etmedi"),
        ("NETGSM_USERCODE", "1111111111", "30", "şifreyi kabul etmedi"),
        ("NETGSM_MSGHEADER", "BASKA", "40", "Gönderici adı"),
    ],
)
def test_netgsms_refusals_keep_the_raw_code_and_say_why(netgsm, settings, setting, value, code, words):
    setattr(settings, setting, value)
    result = NetgsmBackend().send(to=PHONE, text="Merhaba")
    assert not result.ok and result.code == code and result.answer == code and words in result.explanation


def test_a_bad_number_or_an_empty_text_is_refused_by_the_provider(netgsm):
    assert NetgsmBackend().send(to="+90212555", text="Merhaba").code == "70"
    assert NetgsmBackend().send(to=PHONE, text="   ").code == "20"


def test_too_many_to_one_number_is_the_duplicate_limit(netgsm):
    backend = NetgsmBackend()
    for _ in range(SAME_NUMBER_LIMIT):
        assert backend.send(to=PHONE, text="Merhaba").ok
    result = backend.send(to=PHONE, text="Merhaba")
    assert result.code == "85" and "çok fazla mesaj" in result.explanation


def test_a_system_error_and_an_http_error(netgsm):
    netgsm.state.answer_next = [(200, "100"), (503, "Service Unavailable")]
    first, second = NetgsmBackend().send(to=PHONE, text="a"), NetgsmBackend().send(to=PHONE, text="a")
    assert (first.ok, first.code) == (False, "100") and "sistem hatası" in first.explanation
    assert (second.ok, second.code, second.answer) == (False, "http-503", "Service Unavailable")


def test_a_slow_provider_is_a_timeout_not_a_hang(netgsm, settings):
    settings.SMS_READ_TIMEOUT = 1
    netgsm.state.delay = 2.5
    result = NetgsmBackend().send(to=PHONE, text="Merhaba")
    assert (result.ok, result.code) == (False, "timeout") and "zamanında yanıt vermedi" in result.explanation


def test_a_provider_that_is_not_there_is_a_connection_failure(netgsm, settings):
    gone = NetgsmStandIn().start()
    settings.NETGSM_API_URL = gone.url
    gone.stop()
    result = NetgsmBackend().send(to=PHONE, text="Merhaba")
    assert (result.ok, result.code) == (False, "connection") and "ulaşılamadı" in result.explanation


def test_missing_credentials_send_nothing(netgsm, settings):
    settings.NETGSM_PASSWORD = ""
    result = NetgsmBackend().send(to=PHONE, text="Merhaba")
    assert (result.ok, result.code) == (False, "config") and not netgsm.state.received


def test_unknown_answers_are_failures():
    assert parse_answer("").code == "empty" and not parse_answer("").ok
    assert parse_answer("99").explanation == "SMS sağlayıcısı tanınmayan bir yanıt verdi."
    assert parse_answer("01 123").ok and parse_answer("01 123").message_id == "123"


def test_the_console_backend_logs_the_number_and_identity_numbers_masked(caplog, settings):
    settings.SMS_BACKEND = "outreach.sms.console.ConsoleBackend"
    with caplog.at_level(logging.INFO, logger="outreach.sms.console"):
        result = sms_backend().send(to=PHONE, text="TCKN 10000000146 için teklif")
    assert isinstance(sms_backend(), ConsoleBackend) and result.ok
    logged = caplog.text
    assert mask_phone(PHONE) == "0532 *** ** 67" and "0532 *** ** 67" in logged
    assert "5321234567" not in logged and "10000000146" not in logged
