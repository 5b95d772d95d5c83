"""Netgsm's HTTP SMS API (`sms/send/get`), one message to one number.

As Netgsm publishes it: a GET to https://api.netgsm.com.tr/sms/send/get with `usercode`,
`password`, `gsmno` (5xxxxxxxxx), `message`, `msgheader` (the approved sender name) and
`dil=TR` (Turkish characters). The answer is plain text, HTTP 200 either way: "00 <bulk id>"
when the message was taken ("01"/"02" too: taken, with the start/stop date corrected), otherwise
one error code (table below). A wrong password is "30" with status 200, not a 401.

The password travels in the query string because that is this API; the URL is never logged nor
stored (a transport error keeps only its kind, since `requests` puts the URL in its messages).
"""

from __future__ import annotations

import logging

import requests
from django.conf import settings

from outreach.sms import SmsResult, mask_phone

logger = logging.getLogger(__name__)

TAKEN = frozenset({"00", "01", "02"})
# Netgsm's codes for sms/send/get, in the agent's words.
ERRORS_TR: dict[str, str] = {
    "20": "Mesaj metninde sorun var ya da mesaj en uzun boyu aşıyor.",
    "30": "SMS sağlayıcısı kullanıcı adını ya da şifreyi kabul etmedi (ya da API erişimi / IP izni yok).",
    "40": "Gönderici adı (mesaj başlığı) SMS sağlayıcısında tanımlı değil.",
    "50": "SMS hesabı İYS kontrollü gönderime açık değil.",
    "51": "SMS hesabında İYS marka bilgisi yok.",
    "70": "SMS sağlayıcısı isteği eksik ya da hatalı buldu (numara ya da parametre).",
    "80": "SMS gönderim sınırı aşıldı.",
    "85": "Aynı numaraya kısa sürede çok fazla mesaj gönderildi (mükerrer gönderim sınırı).",
    "100": "SMS sağlayıcısında sistem hatası.",
    "101": "SMS sağlayıcısında sistem hatası.",
}
UNKNOWN_TR = "SMS sağlayıcısı tanınmayan bir yanıt verdi."
ANSWER_LIMIT = 500


def gsm_number(number: str) -> str:
    """ "+905321234567" / "05321234567" -> "5321234567": the 10 digits Netgsm's gsmno takes."""
    digits = "".join(ch for ch in number if ch.isdigit())
    return digits[-10:]


class NetgsmBackend:
    name = "netgsm"

    def __init__(self) -> None:
        self.url = settings.NETGSM_API_URL
        self.usercode = settings.NETGSM_USERCODE
        self.password = settings.NETGSM_PASSWORD
        self.header = settings.NETGSM_MSGHEADER
        self.timeout = (settings.SMS_CONNECT_TIMEOUT, settings.SMS_READ_TIMEOUT)

    def send(self, *, to: str, text: str) -> SmsResult:
        if not (self.usercode and self.password and self.header):
            return SmsResult(ok=False, code="config", explanation="Netgsm hesap bilgileri ayarlanmamış.")
        params = {
            "usercode": self.usercode,
            "password": self.password,
            "gsmno": gsm_number(to),
            "message": text,
            "msgheader": self.header,
            "dil": "TR",
        }
        try:
            response = requests.get(self.url, params=params, timeout=self.timeout)
        except requests.Timeout:
            logger.warning("netgsm: no answer in time for %s", mask_phone(to))
            return SmsResult(ok=False, code="timeout", explanation="SMS sağlayıcısı zamanında yanıt vermedi.")
        except requests.RequestException as error:
            logger.warning("netgsm: %s reaching the provider for %s", type(error).__name__, mask_phone(to))
            return SmsResult(ok=False, code="connection", explanation="SMS sağlayıcısına ulaşılamadı.")
        answer = response.text.strip()[:ANSWER_LIMIT]
        if response.status_code != 200:
            return SmsResult(
                ok=False,
                code=f"http-{response.status_code}",
                answer=answer,
                explanation=f"SMS sağlayıcısı HTTP {response.status_code} ile yanıt verdi.",
            )
        return parse_answer(answer)


def parse_answer(answer: str) -> SmsResult:
    """ "00 1234567890" -> taken, bulk id 1234567890; "30" -> refused, in Turkish."""
    parts = answer.split()
    code = parts[0] if parts else ""
    if code in TAKEN:
        return SmsResult(ok=True, code=code, answer=answer, message_id=parts[1] if len(parts) > 1 else "")
    return SmsResult(ok=False, code=code or "empty", answer=answer, explanation=ERRORS_TR.get(code, UNKNOWN_TR))
