"""A list's query filters, and its search: a term that may be an identity number never sits in a URL."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers
from rest_framework.request import Request

from insurehub.api_input import InputSerializer


def query_filters(serializer_class: type[serializers.Serializer], request: Request) -> dict[str, Any]:
    """A list's query parameters, validated (400 naming the parameter otherwise). Read from a plain
    dict: DRF reads a blank optional field of a QueryDict as absent, so `?product=` would pass as
    "no filter" where the schema promises a 400."""
    filters = serializer_class(data=request.query_params.dict())
    filters.is_valid(raise_exception=True)
    return dict(filters.validated_data)


# gunicorn's access log (and every proxy's) writes the whole URL: an identity number in `?search=`
# would sit there in full. Nine digits are most of one (plates have at most six).
_IDENTITY_DIGITS_IN_URL = 9


def search_not_in_url(value: str, *, search_path: str) -> str:
    """A list's GET `search`, refused when it holds an identity number (a TCKN/VKN, or most of
    one): that search is a POST to `search_path`, with the number in the body."""
    if sum(ch.isdigit() for ch in value) >= _IDENTITY_DIGITS_IN_URL:
        raise serializers.ValidationError(
            "T.C. kimlik / vergi numarasıyla arama adres satırında (GET) yapılamaz: adres sunucu "
            f"kayıtlarına olduğu gibi yazılır. Aramayı POST {search_path} ile gövdede gönderin "
            '({"search": "..."}).'
        )
    return value


class SearchInputSerializer(InputSerializer):
    """The body of a list's POST search: the term never sits in a URL."""

    search = serializers.CharField(max_length=64, help_text="The term; a full TCKN/VKN finds its records.")

    class Meta:
        ref_name = "ListSearchInput"


def search_post_description(list_path: str) -> str:
    return (
        f"The list of GET {list_path} filtered by a term sent in the body, so an identity number "
        "never reaches a URL (access logs keep URLs whole). Pages as the list does: `limit` and "
        "`offset` in the query; `next` and `previous` are POSTed again with the same body."
    )
