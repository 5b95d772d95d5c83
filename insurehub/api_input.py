"""What the API accepts as a request body, for every write endpoint alike: JSON it can read and
the fields the operation declares, nothing else; both refused in Turkish, naming what is wrong.

- `JSONParser` (`REST_FRAMEWORK["DEFAULT_PARSER_CLASSES"]`): a body that is not JSON answers 400
  `{"detail": "JSON okunamadı: ..."}` with where it stopped, not DRF's English "JSON parse error"
  (any other body no parser could read: `BODY_UNREADABLE_MESSAGE`, `insurehub.api_errors`).
- `InputSerializer` (and `UnknownFieldsRefused` for a serializer that has another base): a field
  the operation does not take is a 400 on that field, with the fields it does take, instead of
  being dropped without a word (a typo in an optional field would otherwise silently change what
  is done: `start_on` for `starts_on` issues from tomorrow). Every API input serializer is one.
- `EmptyInput`: the body of an operation that takes none (it may be empty, never carry fields).
- `request_bodies_closed`: the OpenAPI document says the same (`additionalProperties: false`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from rest_framework import exceptions, parsers, serializers
from rest_framework.settings import api_settings

__all__ = [
    "BODY_NOT_AN_OBJECT_MESSAGE",
    "BODY_UNREADABLE_MESSAGE",
    "BodyUnreadable",
    "EmptyInput",
    "InputSerializer",
    "JSONParser",
    "UnknownFieldsRefused",
    "request_bodies_closed",
    "unknown_field_message",
]

BODY_NOT_AN_OBJECT_MESSAGE = 'İstek gövdesi bir JSON nesnesi olmalıdır: {"alan": "değer"} biçiminde.'


def unknown_field_message(known: list[str]) -> str:
    allowed = ", ".join(known) if known else "hiçbiri; bu işlem gövdede alan almaz"
    return f"Bu işlem bu alanı tanımıyor. Kullanılabilecek alanlar: {allowed}."


def json_unreadable_message(error: BaseException | None) -> str:
    """Where and why the body stopped being JSON, for a person fixing the call."""
    if isinstance(error, json.JSONDecodeError):
        return (
            f"JSON okunamadı: gövde {error.lineno}. satır {error.colno}. sütunda geçerli JSON olmaktan çıkıyor. "
            'Gövdeyi çift tırnaklı bir JSON nesnesi olarak gönderin: {"alan": "değer"}.'
        )
    if isinstance(error, UnicodeDecodeError):
        return "JSON okunamadı: gövde UTF-8 olarak okunamıyor."
    if isinstance(error, ValueError) and str(error).startswith("Out of range float values"):
        return "JSON okunamadı: NaN ve Infinity JSON değeri değildir."
    return 'JSON okunamadı: gövde geçerli bir JSON değil. Gövdeyi {"alan": "değer"} biçiminde gönderin.'


class BodyUnreadable(exceptions.ParseError):
    """400 `{"detail": ...}`: the body could not be read at all; the detail says why, in Turkish."""


BODY_UNREADABLE_MESSAGE = "İstek gövdesi okunamadı; gövdeyi JSON olarak (Content-Type: application/json) gönderin."


class JSONParser(parsers.JSONParser):
    """DRF's JSON parser, answering a body it can not read in Turkish."""

    def parse(self, stream: Any, media_type: str | None = None, parser_context: Mapping[str, Any] | None = None) -> Any:
        try:
            return super().parse(stream, media_type, parser_context)
        except exceptions.ParseError as refused:
            # DRF raises it while handling the decoder's error: that one says where it stopped.
            raise BodyUnreadable(json_unreadable_message(refused.__context__)) from None


class UnknownFieldsRefused:
    """A serializer mixin: the body's keys must be the serializer's fields. Unknown ones are
    reported with the fields' own errors, all at once."""

    def to_internal_value(self, data: Any) -> Any:
        if not isinstance(data, Mapping):
            raise serializers.ValidationError({api_settings.NON_FIELD_ERRORS_KEY: [BODY_NOT_AN_OBJECT_MESSAGE]})
        # A mixin: `fields` and the next to_internal_value are the serializer's it is mixed into.
        known = [name for name, field in self.fields.items() if not field.read_only]  # type: ignore[attr-defined]
        unknown = {key: [unknown_field_message(known)] for key in data if key not in known}
        try:
            value = super().to_internal_value(data)  # type: ignore[misc]  # the serializer's, after this mixin
        except serializers.ValidationError as invalid:
            if unknown and isinstance(invalid.detail, dict):
                raise serializers.ValidationError({**invalid.detail, **unknown}) from None
            raise
        if unknown:
            raise serializers.ValidationError(unknown)
        return value


class InputSerializer(UnknownFieldsRefused, serializers.Serializer):
    """The base of every API request body."""


class EmptyInput(InputSerializer):
    """The body of an operation that takes none: empty, or `{}`."""

    class Meta:
        ref_name = "EmptyInput"

    @classmethod
    def check(cls, data: Any) -> None:
        if data in (None, "", b""):
            return
        cls(data=data).is_valid(raise_exception=True)


def request_bodies_closed(result: dict, generator: Any, request: Any, public: bool) -> dict:
    """drf-spectacular postprocessing hook: every request body's object schema says
    `additionalProperties: false`, as `UnknownFieldsRefused` enforces."""
    components = result.get("components", {}).get("schemas", {})
    for item in result.get("paths", {}).values():
        for operation in item.values():
            if not isinstance(operation, dict):
                continue
            for media in (operation.get("requestBody") or {}).get("content", {}).values():
                schema = media.get("schema") or {}
                ref = schema.get("$ref", "")
                target = components.get(ref.rsplit("/", 1)[-1]) if ref else schema
                if isinstance(target, dict) and target.get("type") == "object" and "properties" in target:
                    target["additionalProperties"] = False
    return result
