"""Display helpers for the quote desk: Turkish money, masked identity numbers, row status text."""

from __future__ import annotations

import math
from datetime import datetime

from django import template
from django.utils import timezone
from django.utils.html import format_html

from insurehub.masking import mask_identity
from insurehub.money import turkish_amount
from integrations.answers.taxonomy import same_text
from integrations.operations import PRODUCT_LABELS_TR, Product
from quotes.models import InsurerQuote
from quotes.services.comparison import NOT_COVERED, OPTION_NAMES_TR, option_value_text
from quotes.validation import PRODUCT_OPTION_FIELDS, option_given

register = template.Library()

_STATE_TEXT: dict[str, str] = {
    InsurerQuote.State.QUEUED: "Soruluyor…",
    InsurerQuote.State.RUNNING: "Soruluyor…",
}


@register.filter
def try_money(value: object) -> str:
    """4312.5 -> "4.312,50 ₺", whatever language the browser asked for: agents read lira the Turkish way."""
    text = turkish_amount(value)
    return f"{text} ₺" if text else ""


@register.filter
def product_label(code: str) -> str:
    """ "trafik" -> "Trafik", "dask" -> "DASK": the stored product choices carry no display names."""
    try:
        return PRODUCT_LABELS_TR[Product(code)]
    except ValueError:
        return str(code)


@register.filter
def validity_left(valid_until: datetime | None, now: datetime | None = None) -> str:
    """How long a quote stays valid, "(12 dk 05 sn kaldı)" or "(2 sa 30 dk kaldı)", exactly as
    static/insurehub/desk.js counts it down every second: the page is rendered here and swapped
    in again while insurers answer, so two formats would flip back and forth on screen."""
    if valid_until is None:
        return ""
    left = math.floor((valid_until - (now or timezone.now())).total_seconds())
    if left <= 0:
        return "(süresi doldu)"
    minutes, seconds = divmod(left, 60)
    text = f"{minutes // 60} sa {minutes % 60} dk" if minutes >= 60 else f"{minutes} dk {seconds:02d} sn"
    return f"({text} kaldı)"


@register.filter
def says_more_than(insurers: str, ours: str) -> bool:
    """Whether the insurer's own words, shown beside our sentence, add anything: not when they
    are the same words ("Risk kabul edilmedi" twice), as `with_insurer_text` joins them."""
    return bool((insurers or "").strip()) and not same_text(ours or "", insurers)


@register.filter
def masked(value: object) -> str:
    """KVKK: an identity number on a screen keeps only enough to tell two customers apart."""
    return mask_identity(value)


@register.filter
def quote_status(row: InsurerQuote) -> str:
    """The words an agent sees for one insurer's row (a successful row shows its premium instead)."""
    if row.state == InsurerQuote.State.SUCCEEDED:
        return try_money(row.premium)
    if row.state == InsurerQuote.State.RETRYING:
        return f"Tekrar deneniyor ({row.attempt}/{row.max_attempts})"
    if row.state == InsurerQuote.State.FAILED:
        return row.message or "Şirket teklif vermedi."
    if row.state == InsurerQuote.State.NO_ANSWER:
        # The service words it ("Yanıt alınamadı: şirket yoğun."); the bare phrase is the fallback.
        return row.message or "Yanıt alınamadı"
    return _STATE_TEXT.get(row.state, row.get_state_display())


@register.simple_tag
def coverage_cell(value: object, label: str = "") -> str:
    """One comparison cell: a limit in lira, "Limitsiz" (None) or "Yok" (not listed at all).

    `label`, the cover's name, rides on the cell as data-label: on a phone the comparison is one
    card per insurer (desk.css), and there the row's own heading is not beside the cell.
    """
    css = "num not-covered" if value is NOT_COVERED else "num"
    text = "Yok" if value is NOT_COVERED else "Limitsiz" if value is None else try_money(value)
    if label:
        return format_html('<td class="{}" data-label="{}">{}</td>', css, label, text)
    return format_html('<td class="{}">{}</td>', css, text)


@register.filter
def chosen_options(quote_request: object) -> list[tuple[str, str]]:
    """The options a request asked for (kasko), as (name, value) in words: "Muafiyet", "5.000,00 ₺"."""
    product = getattr(quote_request, "product", "")
    data = getattr(quote_request, "input_data", None) or {}
    return [
        (OPTION_NAMES_TR[name], option_value_text(name, data[name]))
        for name in PRODUCT_OPTION_FIELDS.get(product, ())
        if option_given(data, name)
    ]
