"""The one error taxonomy every insurer's answer is translated into.

Every insurer says "no" in its own words; the platform decides what to do from three classes:
*permanent* (never succeeds as sent), *retryable* (right request, wrong moment) and *unknown*
(not classified yet: retried under a low cap and logged loudly until somebody maps it).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class ErrorClass(StrEnum):
    PERMANENT = "permanent"
    RETRYABLE = "retryable"
    UNKNOWN = "unknown"


class ErrorKind(StrEnum):
    # permanent
    VALIDATION = "validation"
    AUTH = "auth"
    NOT_ALLOWED = "not_allowed"
    NOT_FOUND = "not_found"
    BUSINESS_REJECT = "business_reject"
    EXPIRED = "expired"
    # retryable
    THROTTLED = "throttled"
    UNAVAILABLE = "unavailable"
    TIMEOUT = "timeout"
    CONNECTION = "connection"
    # The insurer has the record but not yet what was asked of it (a policy's PDF is produced
    # after issuance): a wait the insurer asks for, like a throttle, never a failure.
    NOT_READY = "not_ready"
    # unknown
    UNCLASSIFIED = "unclassified"

    @property
    def error_class(self) -> ErrorClass:
        return KIND_CLASS[self]


KIND_CLASS: dict[ErrorKind, ErrorClass] = {
    ErrorKind.VALIDATION: ErrorClass.PERMANENT,
    ErrorKind.AUTH: ErrorClass.PERMANENT,
    ErrorKind.NOT_ALLOWED: ErrorClass.PERMANENT,
    ErrorKind.NOT_FOUND: ErrorClass.PERMANENT,
    ErrorKind.BUSINESS_REJECT: ErrorClass.PERMANENT,
    ErrorKind.EXPIRED: ErrorClass.PERMANENT,
    ErrorKind.THROTTLED: ErrorClass.RETRYABLE,
    ErrorKind.UNAVAILABLE: ErrorClass.RETRYABLE,
    ErrorKind.TIMEOUT: ErrorClass.RETRYABLE,
    ErrorKind.CONNECTION: ErrorClass.RETRYABLE,
    ErrorKind.NOT_READY: ErrorClass.RETRYABLE,
    ErrorKind.UNCLASSIFIED: ErrorClass.UNKNOWN,
}

# What an agent is told, per kind, when the insurer's own message is not fit to show.
KIND_MESSAGE_TR: dict[ErrorKind, str] = {
    ErrorKind.VALIDATION: "Şirket girilen bilgileri kabul etmedi.",
    ErrorKind.AUTH: "Şirkete giriş yapılamadı: acente hesap bilgilerini kontrol edin.",
    ErrorKind.NOT_ALLOWED: "Bu ürün için yetkiniz yok.",
    ErrorKind.NOT_FOUND: "Kayıt şirkette bulunamadı.",
    ErrorKind.BUSINESS_REJECT: "Şirket teklifi reddetti.",
    ErrorKind.EXPIRED: "Teklifin süresi dolmuş.",
    ErrorKind.THROTTLED: "Şirket yoğun.",
    ErrorKind.UNAVAILABLE: "Şirket yoğun.",
    ErrorKind.TIMEOUT: "Yanıt alınamadı.",
    ErrorKind.CONNECTION: "Şirkete bağlanılamadı.",
    ErrorKind.NOT_READY: "Belge henüz hazır değil.",
    ErrorKind.UNCLASSIFIED: "Şirketten beklenmeyen bir yanıt geldi.",
}


class Reason:
    """The Turkish words for the refusals every insurer has in its own code; each adapter maps
    its codes to these, so an agent reads the same sentence whichever insurer said no."""

    NOT_ELIGIBLE = "Araç teminata uygun değil"
    RISK_DECLINED = "Risk kabul edilmedi"
    QUOTE_EXPIRED = "Teklifin süresi dolmuş"
    PRODUCT_NOT_ALLOWED = "Bu ürün için yetkiniz yok"


@dataclass(frozen=True)
class WaitHint:
    """How long the insurer asked us to wait, and which signal said so (kept for the attempt log)."""

    seconds: float
    source: str


class InsurerError(Exception):
    """An insurer call that did not succeed, already translated into the taxonomy.

    `provider_code` is what the insurer said (its own code, or `HTTP_<status>`, or a transport
    marker such as `READ_TIMEOUT`); `kind` is what we concluded. Both are kept side by side so
    the attempt log shows what the insurer said, not only our reading of it.

    `ambiguous` means the request may have taken effect at the insurer (the answer was lost
    after sending): an issuance must ask the insurer for the state before sending again.
    """

    def __init__(
        self,
        kind: ErrorKind,
        *,
        provider_code: str,
        message: str = "",
        http_status: int | None = None,
        field: str | None = None,
        wait: WaitHint | None = None,
        ambiguous: bool = False,
        raw_sample: str = "",
    ) -> None:
        super().__init__(f"{kind} ({provider_code}): {message}".strip())
        self.kind = ErrorKind(kind)
        self.provider_code = provider_code
        self.message = message
        self.http_status = http_status
        self.field = field
        self.wait = wait
        self.ambiguous = ambiguous
        self.raw_sample = raw_sample

    def __reduce__(self) -> tuple:
        """Keyword-only arguments do not survive pickling by default; a task result carries errors."""
        return (_rebuild_insurer_error, (self.kind, dict(vars(self))))

    @property
    def error_class(self) -> ErrorClass:
        return self.kind.error_class

    @property
    def is_throttle(self) -> bool:
        return self.kind is ErrorKind.THROTTLED

    def agent_message(self) -> str:
        """Turkish text fit for an agent's screen."""
        if self.error_class is ErrorClass.PERMANENT and self.message:
            return self.message
        return KIND_MESSAGE_TR[self.kind]


def _rebuild_insurer_error(kind: ErrorKind, state: dict) -> InsurerError:
    error = InsurerError(kind, provider_code=state.get("provider_code", ""))
    error.__dict__.update(state)
    return error


class Refusal(Exception):
    """Raised by an adapter's response reader: the insurer answered, and the answer is a "no".

    Adapters only say *what the insurer said*; the channel turns it into an `InsurerError` by
    looking the code up (admin overrides first, then the adapter's table). `kind` lets an
    adapter classify answers that carry no code of their own (an HTML gateway page, say).
    """

    def __init__(
        self,
        code: str,
        message: str = "",
        *,
        field: str | None = None,
        wait: WaitHint | None = None,
        ambiguous: bool | None = None,
        kind: ErrorKind | None = None,
    ) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.field = field
        self.wait = wait
        self.ambiguous = ambiguous
        self.kind = kind
