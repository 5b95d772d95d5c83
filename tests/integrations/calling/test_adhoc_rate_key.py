"""An endpoint given its credentials by hand keys its rate state by the adapter's identifying field."""

from __future__ import annotations

from integrations.calling.calls import endpoint_resolve

URL = "http://127.0.0.1:9"  # never called: only the endpoint is built


def test_a_secret_identifying_field_shows_only_its_last_four_characters():
    endpoint = endpoint_resolve(insurer_code="anka", base_url=URL, credentials={"api_key": "sk-live-9f3a7c21"})
    assert endpoint.account_key == "anka:key-7c21"


def test_a_plain_identifying_field_names_the_account_and_the_password_never_shows():
    endpoint = endpoint_resolve(
        insurer_code="bogazici", base_url=URL, credentials={"username": "acente1", "password": "gizli-parola"}
    )
    assert endpoint.account_key == "bogazici:acente1"


def test_the_field_comes_from_the_adapter_so_a_new_insurer_needs_no_edit_here():
    """Ege (the test-only fifth insurer) names its accounts by `agent_id`, which no list here names."""
    endpoint = endpoint_resolve(insurer_code="ege", base_url=URL, credentials={"agent_id": "EGE-77", "secret": "s"})
    assert endpoint.account_key == "ege:EGE-77"
    missing = endpoint_resolve(insurer_code="ege", base_url=URL, credentials={"secret": "s"})
    assert missing.account_key == "ege:adhoc"
