"""The error taxonomy: every kind has one class, and errors survive a trip through a task queue."""

from __future__ import annotations

import pickle

import pytest

from integrations.answers.taxonomy import KIND_CLASS, ErrorClass, ErrorKind, InsurerError, WaitHint, with_insurer_text


def test_every_kind_has_exactly_one_class():
    """The three classes cover every kind: the issue's eleven, and "not ready" (a document the
    insurer is still producing), a wait the insurer asks for like a throttle."""
    assert set(KIND_CLASS) == set(ErrorKind)
    permanent = {k for k, c in KIND_CLASS.items() if c is ErrorClass.PERMANENT}
    retryable = {k for k, c in KIND_CLASS.items() if c is ErrorClass.RETRYABLE}
    assert {k.value for k in permanent} == {
        "validation",
        "auth",
        "not_allowed",
        "not_found",
        "business_reject",
        "expired",
    }
    assert {k.value for k in retryable} == {"throttled", "unavailable", "timeout", "connection", "not_ready"}
    assert KIND_CLASS[ErrorKind.UNCLASSIFIED] is ErrorClass.UNKNOWN


def test_insurer_error_survives_pickling():
    """django-q stores task results pickled: an error must come back whole."""
    error = InsurerError(
        ErrorKind.THROTTLED,
        provider_code="RATE_LIMITED",
        message="slow down",
        http_status=429,
        wait=WaitHint(2.0, "Retry-After"),
        raw_sample="{}",
    )
    copy = pickle.loads(pickle.dumps(error))  # noqa: S301 - bytes made one line above
    assert (copy.kind, copy.provider_code, copy.http_status, copy.wait) == (
        ErrorKind.THROTTLED,
        "RATE_LIMITED",
        429,
        WaitHint(2.0, "Retry-After"),
    )
    assert copy.error_class is ErrorClass.RETRYABLE


@pytest.mark.parametrize(
    ("ours", "insurers", "shown"),
    [
        ("Risk kabul edilmedi", "Risk kabul edilmedi", "Risk kabul edilmedi"),
        ("Risk kabul edilmedi", "RİSK KABUL EDİLMEDİ.", "Risk kabul edilmedi"),
        ("Risk kabul edilmedi", "  risk   kabul\tedilmedi ", "Risk kabul edilmedi"),
        ("Araç ışık kontrolü", "ARAÇ IŞIK KONTROLÜ", "Araç ışık kontrolü"),
        ("Şirket bu riski kabul etmedi.", "Ödeme reddedildi", "Şirket bu riski kabul etmedi. (Ödeme reddedildi)"),
        ("Risk kabul edilmedi", "", "Risk kabul edilmedi"),
        ("", "Ödeme reddedildi", "Ödeme reddedildi"),
    ],
)
def test_our_sentence_and_the_insurers_words_are_joined_once(ours, insurers, shown):
    assert with_insurer_text(ours, insurers) == shown
