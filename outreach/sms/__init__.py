"""Sending an SMS: one small interface, the backend chosen by the `SMS_BACKEND` setting.

Like Django's e-mail backends: code asks `sms_backend()` for the configured one and calls
`send`; the console backend (the default) only logs, `outreach.sms.netgsm.NetgsmBackend` speaks
Netgsm's HTTP API. A backend never raises for a provider's refusal or a dead network: it answers
an `SmsResult` whose code is the provider's own and whose explanation is Turkish, and the
message is stored failed with both.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from django.conf import settings
from django.utils.module_loading import import_string


@dataclass(frozen=True)
class SmsResult:
    ok: bool
    # The provider's raw code ("00", "30"…), or ours for what never reached it ("timeout").
    code: str
    # The provider's raw answer, as it came (cut), for the message's record.
    answer: str = ""
    message_id: str = ""
    # What went wrong, in Turkish, for the agent.
    explanation: str = ""


class SmsBackend(Protocol):
    name: str

    def send(self, *, to: str, text: str) -> SmsResult:
        """Send `text` to `to` (a Turkish mobile number, +905xxxxxxxxx)."""
        ...


def sms_backend() -> SmsBackend:
    """The backend `SMS_BACKEND` names (a dotted path to a class taking no arguments)."""
    return import_string(settings.SMS_BACKEND)()


def mask_phone(number: str) -> str:
    """ "+905321234567" -> "0532 *** ** 67": enough to tell which of the customer's numbers."""
    digits = "".join(ch for ch in number if ch.isdigit())
    if len(digits) < 4:
        return "***"
    national = "0" + digits[-10:] if len(digits) >= 10 else digits
    return f"{national[:4]} *** ** {national[-2:]}"


def mask_email(address: str) -> str:
    """ "ayse.yilmaz@example.com" -> "a***@example.com"."""
    local, _, domain = address.partition("@")
    return f"{local[:1]}***@{domain}" if domain else "***"
