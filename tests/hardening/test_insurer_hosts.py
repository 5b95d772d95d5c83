"""An insurer's address may only lead to a host operations allowed: never inside the network.

A staff user who could point an insurer at a server of their own would collect every agency's
credentials with the next quote. The allow-list (`INSURER_ALLOWED_HOSTS`) is checked where the
address is saved (the model, so the admin form) and where a call is made (the channel, against
the name and against the address it resolved to); private, link-local and loopback addresses are
refused outside DEBUG, loopback only where the settings allow it (the tests, the demo).
"""

from __future__ import annotations

import socket

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse

from integrations.attempts.recording import BufferedRecorder
from integrations.calling.calls import Endpoint, insurer_operation_run
from integrations.calling.channel import HOST_NOT_ALLOWED
from integrations.insurer_hosts import insurer_host_problem
from integrations.models import Attempt, Insurer
from tests.hardening.test_admin_reach import insurer_form
from tests.samples import TRAFIK


@pytest.fixture
def production_like(settings):
    """Outside DEBUG, loopback not allowed, the allow-list of a real deployment."""
    settings.DEBUG = False
    settings.INSURER_ALLOW_LOOPBACK = False
    settings.INSURER_ALLOW_HTTP = False
    settings.INSURER_ALLOWED_HOSTS = ["ws.anka.com.tr", ".bogazicisigorta.com.tr"]
    return settings


@pytest.mark.parametrize(
    ("host", "allowed"),
    [
        ("ws.anka.com.tr", True),
        ("WS.ANKA.COM.TR.", True),  # host names are case-blind, a trailing dot is the same name
        ("bogazicisigorta.com.tr", True),
        ("acente.bogazicisigorta.com.tr", True),
        ("anka.com.tr", False),  # an exact entry allows that name only
        ("ws.anka.com.tr.collector.example", False),
        ("evilbogazicisigorta.com.tr", False),  # a suffix entry is a domain, not a string ending
        ("collector.example", False),
        ("10.0.0.5", False),
        ("192.168.1.10", False),
        ("172.16.0.1", False),
        ("169.254.169.254", False),  # the cloud metadata service
        ("100.64.0.1", False),
        ("0.0.0.0", False),  # noqa: S104 - an address refused, not one bound
        ("[::1]", False),
        ("::ffff:127.0.0.1", False),
        ("fe80::1", False),
        ("fd00::1", False),
        ("127.0.0.1", False),
        ("localhost", False),
        ("", False),
    ],
)
def test_only_listed_public_hosts_are_allowed_in_production(production_like, host, allowed):
    """The allow-list by name, no internal or loopback address whatever the list says."""
    problem = insurer_host_problem(host)
    assert (problem == "") is allowed, problem
    if not allowed:
        assert problem.startswith("Servis adres"), problem


def test_an_empty_allow_list_refuses_every_host_outside_debug(production_like):
    """A deployment that has not said which insurers it talks to talks to none, and says why."""
    production_like.INSURER_ALLOWED_HOSTS = []
    problem = insurer_host_problem("ws.anka.com.tr")
    assert "INSURER_ALLOWED_HOSTS" in problem and problem.startswith("Servis adresi")


def test_loopback_only_where_the_settings_allow_it(production_like):
    """The sandbox on this machine: allowed by INSURER_ALLOW_LOOPBACK (the test and local
    settings) or DEBUG, never by being listed; other internal ranges stay refused."""
    production_like.INSURER_ALLOW_LOOPBACK = True
    assert insurer_host_problem("127.0.0.1") == ""
    assert insurer_host_problem("localhost") == ""
    assert insurer_host_problem("10.0.0.5") != ""
    production_like.INSURER_ALLOW_LOOPBACK = False
    production_like.DEBUG = True
    assert insurer_host_problem("127.0.0.1") == ""
    assert insurer_host_problem("collector.example") != ""  # a list, once set, holds under DEBUG too
    production_like.INSURER_ALLOWED_HOSTS = []
    assert insurer_host_problem("10.0.0.5") == ""  # a developer's own network, no list set


@pytest.mark.parametrize(
    ("url", "message"),
    [
        (
            "https://collector.example/anka",
            "Servis adresi (collector.example) izin verilen sigorta şirketi sunucuları arasında değil; "
            "izin listesi sunucu ayarlarındadır (INSURER_ALLOWED_HOSTS).",
        ),
        (
            "https://169.254.169.254/latest",
            "Servis adresi iç ağdaki ya da genel olmayan bir adrese (169.254.169.254) yönlendirilemez.",
        ),
        ("https://127.0.0.1:8443", "Servis adresi bu sunucunun kendisine (127.0.0.1) yönlendirilemez."),
    ],
)
def test_saving_an_address_outside_the_allow_list_names_the_field_in_turkish(production_like, db, url, message):
    """Model validation (what the admin form runs) refuses it on `base_url`, in Turkish."""
    with pytest.raises(ValidationError) as caught:
        Insurer(code="x", name="X", base_url=url).full_clean()
    assert caught.value.message_dict == {"base_url": [message]}


def test_a_listed_https_address_is_saved(production_like, db):
    Insurer(code="x", name="X", base_url="https://acente.bogazicisigorta.com.tr/ws").full_clean()


def test_the_admin_refuses_an_address_outside_the_allow_list_and_keeps_the_old_one(
    production_like, admin_client, seeded_accounts
):
    """A staff user pointing Anka at their own server gets the error on the field; nothing changes."""
    anka = Insurer.objects.get(code="anka")
    before = anka.base_url
    url = reverse("admin:integrations_insurer_change", args=[anka.pk])
    response = admin_client.post(url, insurer_form(anka, base_url="https://collector.example/anka"))
    assert response.status_code == 200
    errors = response.context["adminform"].form.errors["base_url"]
    assert errors == [
        "Servis adresi (collector.example) izin verilen sigorta şirketi sunucuları arasında değil; "
        "izin listesi sunucu ayarlarındadır (INSURER_ALLOWED_HOSTS)."
    ]
    assert Insurer.objects.get(pk=anka.pk).base_url == before


def test_a_call_to_a_host_not_allowed_is_refused_permanently_and_nothing_is_sent(
    production_like, db, sandbox, endpoint_for
):
    """An address stored before the allow-list (here: the sandbox, once loopback is off): the
    call is a permanent local refusal, the insurer receives nothing, no attempt row is written."""
    endpoint = endpoint_for("anka")
    recorder = BufferedRecorder()
    outcome = insurer_operation_run(endpoint=endpoint, operation="trafik_quote", data=dict(TRAFIK), recorder=recorder)
    assert not outcome.ok
    assert outcome.error.provider_code == HOST_NOT_ALLOWED
    assert outcome.error.error_class.value == "permanent"
    assert outcome.error.agent_message() == "Servis adresi bu sunucunun kendisine (127.0.0.1) yönlendirilemez."
    assert outcome.attempts <= 1
    assert recorder.records == [] and not Attempt.objects.exists()
    assert sandbox["anka"].state.counts()["received"].get("trafik_quote", 0) == 0


def test_a_listed_name_that_resolves_inside_the_network_is_refused_at_connect(production_like, db, sandbox):
    """The allow-list is of names; a listed name whose DNS answer is internal (here: this
    machine's own name, resolving to loopback) is refused once connected, before a byte is sent."""
    name = socket.gethostname()
    try:
        resolved = socket.gethostbyname(name)
    except OSError:
        pytest.skip("this machine's name does not resolve")
    if not resolved.startswith("127."):
        pytest.skip(f"this machine's name resolves to {resolved}, not loopback")
    production_like.INSURER_ALLOWED_HOSTS = [name]
    server = sandbox["anka"]
    endpoint = Endpoint(
        insurer_code="anka",
        base_url=f"http://{name}:{server.port}",
        credentials={"api_key": "anka-key-acente1"},
        account_key="anka:ACENTE1",
    )
    recorder = BufferedRecorder()
    outcome = insurer_operation_run(endpoint=endpoint, operation="trafik_quote", data=dict(TRAFIK), recorder=recorder)
    assert outcome.error.provider_code == HOST_NOT_ALLOWED, outcome.error
    assert "bu sunucunun kendisine" in outcome.error.message
    assert recorder.records == []
    assert server.state.counts()["received"].get("trafik_quote", 0) == 0
