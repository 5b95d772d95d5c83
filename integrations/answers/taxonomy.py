"""The one error taxonomy every insurer's answer is translated into.

Every insurer says "no" in its own words; the platform decides what to do from three classes:
*permanent* (never succeeds as sent), *retryable* (right request, wrong moment) and *unknown*
(not classified yet: retried under a low cap and logged loudly until somebody maps it).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from integrations.operations import KASKO_OPTION_FIELDS


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


# How the admin names them (list columns and filters): the values stay the code's vocabulary.
ERROR_CLASS_LABELS_TR: dict[ErrorClass, str] = {
    ErrorClass.PERMANENT: "Kalıcı",
    ErrorClass.RETRYABLE: "Geçici",
    ErrorClass.UNKNOWN: "Bilinmeyen",
}
ERROR_KIND_LABELS_TR: dict[ErrorKind, str] = {
    ErrorKind.VALIDATION: "Geçersiz bilgi",
    ErrorKind.AUTH: "Kimlik doğrulama",
    ErrorKind.NOT_ALLOWED: "Yetki yok",
    ErrorKind.NOT_FOUND: "Kayıt bulunamadı",
    ErrorKind.BUSINESS_REJECT: "Şirket reddetti",
    ErrorKind.EXPIRED: "Süresi dolmuş",
    ErrorKind.THROTTLED: "Kısıtlama (hız sınırı)",
    ErrorKind.UNAVAILABLE: "Hizmet kullanılamıyor",
    ErrorKind.TIMEOUT: "Zaman aşımı",
    ErrorKind.CONNECTION: "Bağlantı hatası",
    ErrorKind.NOT_READY: "Henüz hazır değil",
    ErrorKind.UNCLASSIFIED: "Sınıflandırılmamış",
}
ERROR_CLASS_CHOICES = [(value.value, label) for value, label in ERROR_CLASS_LABELS_TR.items()]
ERROR_KIND_CHOICES = [(value.value, label) for value, label in ERROR_KIND_LABELS_TR.items()]


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

# The platform's input fields as an agent knows them, for "which field did the insurer refuse".
FIELD_LABELS_TR: dict[str, str] = {
    "plate": "plaka",
    "owner_id": "T.C. kimlik / vergi no",
    "registration_serial": "ruhsat seri no",
    "usage": "kullanım tarzı",
    "model_year": "model yılı",
    "brand_code": "marka kodu",
    "model_code": "tip kodu",
    "uavt_code": "UAVT adres kodu",
    "building_id": "bina no",
    "construction_type": "yapı tarzı",
    "construction_year": "inşa yılı",
    "floor_count": "kat sayısı",
    "gross_m2": "brüt alan (m²)",
    "damage_status": "hasar durumu",
    # quote and issuance terms (CONTRACTS.md, "Policy start", "Installments", "Kasko options")
    "starts_on": "poliçe başlangıç tarihi",
    "installments": "taksit sayısı",
    "deductible": "muafiyet",
    "replacement_car_days": "ikame araç gün sayısı",
    "liability_limit": "İMM limiti",
    "repair_shop": "servis türü",
    "payment_token": "ödeme bilgisi",
    "quote_no": "teklif no",
    "policy_no": "poliçe no",
}

# Cancellation and the production list's fields (CONTRACTS.md, the last two sections).
FIELD_LABELS_TR.update(
    {
        "reason": "iptal nedeni",
        "effective_on": "iptal tarihi",
        "issued_from": "başlangıç tarihi",
        "issued_to": "bitiş tarihi",
    }
)

# What an agent is told for a refusal, in plain Turkish, by kind: what happened and what to do.
# The insurer's own words and code stay visible beside it ("ayrıntı"), never instead of it.
PLAIN_MESSAGE_TR: dict[ErrorKind, str] = {
    ErrorKind.VALIDATION: "Şirket girilen bilgileri kabul etmedi. Bilgileri kontrol edip yeniden deneyin.",
    ErrorKind.AUTH: "Şirkete acente hesabıyla giriş yapılamadı. Acente yöneticiniz hesap bilgilerini kontrol etmeli.",
    ErrorKind.NOT_ALLOWED: "Acentenizin bu şirkette bu ürünü satma yetkisi yok.",
    ErrorKind.NOT_FOUND: "Şirket kaydı bulamadı (adres kodu, teklif ya da poliçe numarası).",
    ErrorKind.BUSINESS_REJECT: "Şirket bu riski kabul etmedi.",
    ErrorKind.EXPIRED: "Teklifin süresi dolmuş. Yeniden teklif alın.",
    ErrorKind.THROTTLED: "Sigorta şirketi şu an yoğun.",
    ErrorKind.UNAVAILABLE: "Sigorta şirketinin sistemi şu an yanıt vermiyor.",
    ErrorKind.TIMEOUT: "Sigorta şirketi zamanında yanıt vermedi.",
    ErrorKind.CONNECTION: "Sigorta şirketine bağlanılamadı.",
    ErrorKind.NOT_READY: "Belge henüz hazır değil; şirket hazırlıyor.",
    ErrorKind.UNCLASSIFIED: "Şirketten beklenmeyen bir yanıt geldi; ekibimiz inceliyor.",
}


# A kasko option the insurer does not sell: the contract has every insurer answer it as a
# validation refusal naming the option ("Kasko options"), and the desk has checked the value
# against the contract's list already, so such a refusal is "not on this insurer's menu".
OPTION_NOT_SOLD_TR = "Şirket seçilen {label} seçeneğini satmıyor. Başka bir seçenekle teklifi yeniden çalışın."


def plain_message(error: InsurerError) -> str:
    """The sentence an agent reads for a refusal: a `Reason` when the adapter recognised the
    insurer's business code (the same words whichever insurer said no), else the kind's plain
    sentence, naming the refused field when the insurer named it (a kasko option it refuses is
    one it does not sell)."""
    if error.message in Reason.ALL:
        return error.message
    if error.is_local_refusal:
        return LOCAL_RATE_LIMIT_PLAIN_TR
    text = PLAIN_MESSAGE_TR[error.kind]
    label = FIELD_LABELS_TR.get(error.field or "")
    if error.kind is ErrorKind.VALIDATION and label and error.field in KASKO_OPTION_FIELDS:
        return OPTION_NOT_SOLD_TR.format(label=label)
    if error.kind is ErrorKind.VALIDATION and label:
        return f"Şirket {label} bilgisini kabul etmedi. Kontrol edip yeniden deneyin."
    return text


# Turkish case: "I" is the capital of "ı" and "İ" that of "i"; str.lower() knows neither.
_TURKISH_CAPITALS = str.maketrans({"I": "ı", "İ": "i"})


def _comparable(text: str) -> str:
    return " ".join(text.translate(_TURKISH_CAPITALS).lower().split()).rstrip(" .!")


def same_text(first: str, second: str) -> bool:
    """Whether two sentences say the same words, whatever their case (Turkish-aware), spacing or
    closing full stop: "Risk kabul edilmedi" and "RİSK KABUL EDİLMEDİ." are one sentence."""
    return _comparable(first) == _comparable(second)


def with_insurer_text(ours: str, insurers: str) -> str:
    """Our sentence with the insurer's own words beside it in brackets, the one way every such
    join is built; once only when they are the same words (an adapter's `Reason` often is)."""
    if not insurers.strip() or same_text(ours, insurers):
        return ours
    if not ours.strip():
        return insurers
    return f"{ours} ({insurers})"


class Reason:
    """The Turkish words for the refusals every insurer has in its own code; each adapter maps
    its codes to these, so an agent reads the same sentence whichever insurer said no."""

    NOT_ELIGIBLE = "Araç teminata uygun değil"
    RISK_DECLINED = "Risk kabul edilmedi"
    QUOTE_EXPIRED = "Teklifin süresi dolmuş"
    PRODUCT_NOT_ALLOWED = "Bu ürün için yetkiniz yok"
    # The insurer will not cancel this policy (expired, an open DASK claim, ...).
    CANCEL_NOT_ALLOWED = "Şirket bu poliçenin iptalini kabul etmedi"
    ALL = frozenset({NOT_ELIGIBLE, RISK_DECLINED, QUOTE_EXPIRED, PRODUCT_NOT_ALLOWED, CANCEL_NOT_ALLOWED})


# provider_code of a call refused on our side because the account's next send slot lies beyond
# the call's deadline: nothing was sent, so nothing can have taken effect. A THROTTLED error
# like the insurer's own (the agent reads the same "şu an yoğun"), but never counted as one.
LOCAL_RATE_LIMIT = "LOCAL_RATE_LIMIT"

# provider_code of a call refused on our side because the shared send-rate state could not be
# reached (Redis or the database restarting): the call cannot be paced, so it is not sent.
# Handled like LOCAL_RATE_LIMIT: a short wait, nothing sent, never the insurer's fault.
PACING_UNAVAILABLE = "PACING_UNAVAILABLE"

# What the agent reads for it: the insurer is busy (our side of its limit), nothing was sent.
LOCAL_RATE_LIMIT_PLAIN_TR = "Sigorta şirketi şu an yoğun; istek gönderilmedi. Biraz sonra yeniden deneyin."

# What such a refusal says beside the plain sentence: why the call was not sent.
LOCAL_RATE_LIMIT_MESSAGE_TR = (
    "Acentenin bu şirketteki gönderim hakkı dolu; istek süresi içinde sıra gelmeyeceği için gönderilmedi."
)


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

    `settles_issuance` marks the insurer's own verdict on an issuance, read from whichever call
    brought it (Deniz's REJECTED request, on a poll or a look-up): that request made no policy.
    Any other refusal met on a look-up answers the look-up, never whether money moved.
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
        settles_issuance: bool = False,
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
        self.settles_issuance = settles_issuance

    def __reduce__(self) -> tuple:
        """Keyword-only arguments do not survive pickling by default; a task result carries errors."""
        return (_rebuild_insurer_error, (self.kind, dict(vars(self))))

    @property
    def error_class(self) -> ErrorClass:
        return self.kind.error_class

    @property
    def is_throttle(self) -> bool:
        return self.kind is ErrorKind.THROTTLED

    @property
    def is_local_refusal(self) -> bool:
        """Refused on our side for want of a send slot (or of the state that hands them out):
        the insurer never saw the call."""
        return self.provider_code in (LOCAL_RATE_LIMIT, PACING_UNAVAILABLE)

    @property
    def is_insurer_throttle(self) -> bool:
        """The insurer itself said "too many": what the send rate learns from."""
        return self.kind is ErrorKind.THROTTLED and not self.is_local_refusal

    def agent_message(self) -> str:
        """Turkish text fit for an agent's screen."""
        if self.error_class is ErrorClass.PERMANENT and self.message:
            return self.message
        return PLAIN_MESSAGE_TR[self.kind]


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
        settles_issuance: bool = False,
    ) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.field = field
        self.wait = wait
        self.ambiguous = ambiguous
        self.kind = kind
        self.settles_issuance = settles_issuance
