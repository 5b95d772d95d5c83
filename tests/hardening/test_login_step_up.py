"""Past a username's limit a login needs the code mailed to the account, not a lock anyone can set (issue 21)."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from agencies.models import LoginFailure, LoginLockout
from console.metrics import metric_families
from tests.hardening.conftest import PASSWORD

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.urls("tests.hardening.throttled_urls")]

USERNAME = "ajan-acente1"
WRONG = "yanlis-parola"
ASKED = "tek kullanımlık bir giriş kodu"


@pytest.fixture
def owner(transactional_db):
    return get_user_model().objects.create_user(
        USERNAME, email="ajan1@acente.example", password=PASSWORD, is_staff=True
    )


def login(username: str, password: str, code: str = "", ip: str = "203.0.113.7", path: str = "/giris/"):
    return Client().post(path, {"username": username, "password": password, "code": code}, REMOTE_ADDR=ip)


def guess_from_many_addresses(username: str = USERNAME, times: int = 10) -> None:
    """A distributed guesser: one wrong password from each of `times` addresses."""
    for n in range(times):
        login(username, WRONG, ip=f"198.51.100.{n + 1}")


def mailed_code(mailoutbox) -> str:
    found = re.search(r"giriş kodunuz: (\d{6})", mailoutbox[-1].body)
    assert found, mailoutbox[-1].body
    return found.group(1)


def test_a_guesser_cannot_lock_the_owner_out_the_mailed_code_lets_them_in(owner, mailoutbox):
    """The owner's right password alone is not judged; with the code mailed to their address it is."""
    guess_from_many_addresses()
    asked = login(USERNAME, PASSWORD)
    assert asked.status_code == 200 and ASKED in asked.content.decode()
    assert 'autocomplete="one-time-code"' in asked.content.decode()  # the page now shows the code field
    assert len(mailoutbox) == 1 and mailoutbox[0].to == ["ajan1@acente.example"]

    entered = login(USERNAME, PASSWORD, code=mailed_code(mailoutbox))
    assert entered.status_code == 302


def test_the_guesser_learns_nothing_without_the_code(owner, mailoutbox):
    """Past the limit the password is not even looked at: the right and a wrong one read the same."""
    guess_from_many_addresses()
    right = login(USERNAME, PASSWORD, ip="192.0.2.1").content.decode()
    wrong = login(USERNAME, WRONG, ip="192.0.2.2").content.decode()
    assert ASKED in right and ASKED in wrong
    assert len(mailoutbox) == 1  # the limit's own mail; then one a minute at most, however many tries


def test_a_code_is_good_once(owner, mailoutbox):
    guess_from_many_addresses()
    login(USERNAME, PASSWORD)
    code = mailed_code(mailoutbox)
    assert login(USERNAME, PASSWORD, code=code).status_code == 302
    again = login(USERNAME, PASSWORD, code=code)
    assert again.status_code == 200 and "Giriş kodu hatalı" in again.content.decode()


def test_five_wrong_codes_void_the_code(owner, mailoutbox):
    """A code cannot be guessed: five wrong entries (a wrong password with it counts) and it is gone."""
    guess_from_many_addresses()
    login(USERNAME, PASSWORD)
    code = mailed_code(mailoutbox)
    wrong_code = f"{(int(code) + 1) % 1_000_000:06d}"
    for attempt in range(4):
        assert (
            "Giriş kodu hatalı" in login(USERNAME, PASSWORD, code=wrong_code, ip=f"192.0.2.{attempt}").content.decode()
        )
    login(USERNAME, WRONG, code=code, ip="192.0.2.9")  # the right code, a wrong password: the fifth try
    assert "Giriş kodu hatalı" in login(USERNAME, PASSWORD, code=code, ip="192.0.2.10").content.decode()


def test_an_unknown_username_reads_the_same_and_mails_nobody(owner, mailoutbox):
    """Nothing tells a guesser whether the account exists or has an address."""
    guess_from_many_addresses("kimse-yok")
    assert ASKED in login("kimse-yok", PASSWORD).content.decode()
    assert mailoutbox == []


def test_a_malformed_code_is_a_turkish_field_error_not_a_500(owner):
    for code in ("12ab56", "١٢٣٤٥٦", "1234567"):
        response = login(USERNAME, PASSWORD, code=code)
        assert response.status_code == 200 and "6 rakamdan oluşur" in response.content.decode()
    api = APIClient().post("/api/auth/token/", {"username": USERNAME, "password": PASSWORD, "code": "x"}, format="json")
    assert api.status_code == 400 and "6 rakamdan oluşur" in api.json()["code"][0]


def test_the_api_token_door_asks_for_the_code_in_its_code_field(owner, mailoutbox):
    guess_from_many_addresses()
    client = APIClient()
    body = {"username": USERNAME, "password": PASSWORD}
    asked = client.post("/api/auth/token/", body, format="json", REMOTE_ADDR="192.0.2.5")
    assert asked.status_code == 400 and ASKED in asked.json()["code"][0]
    done = client.post(
        "/api/auth/token/", {**body, "code": mailed_code(mailoutbox)}, format="json", REMOTE_ADDR="192.0.2.5"
    )
    assert done.status_code == 200 and done.json()["token"]


def test_the_admin_cannot_be_locked_out_either(transactional_db, mailoutbox):
    """The admin login shows the code field and lets the superuser in with the mailed code."""
    get_user_model().objects.create_superuser("yonetici", "yonetici@insurehub.example", PASSWORD)
    guess_from_many_addresses("yonetici")
    asked = login("yonetici", PASSWORD, path="/admin/login/")
    assert asked.status_code == 200 and ASKED in asked.content.decode() and 'name="code"' in asked.content.decode()
    done = login("yonetici", PASSWORD, code=mailed_code(mailoutbox), path="/admin/login/")
    assert done.status_code == 302


def test_an_admin_lifts_a_lock_from_the_failed_logins_admin(owner, mailoutbox):
    """ "Kilidi kaldır": the counters go, the lock-out is marked lifted by whom; no code is asked any more."""
    guess_from_many_addresses()
    mailed = len(mailoutbox)  # the failure that reached the limit mailed the owner a code
    admin_user = get_user_model().objects.create_superuser("yonetici", "yonetici@insurehub.example", PASSWORD)
    admin_client = Client()
    admin_client.force_login(admin_user)
    rows = LoginFailure.objects.filter(username=USERNAME)
    listing = admin_client.get(reverse("admin:agencies_loginfailure_changelist"), {"kilit": "var"})
    assert listing.status_code == 200 and USERNAME in listing.content.decode()
    response = admin_client.post(
        reverse("admin:agencies_loginfailure_changelist"),
        {"action": "lift_locks", "_selected_action": [str(pk) for pk in rows.values_list("pk", flat=True)]},
    )
    assert response.status_code == 302
    assert not LoginFailure.objects.filter(username=USERNAME).exists()
    lifted = LoginLockout.objects.get(scope="username", username=USERNAME)
    assert lifted.lifted_by == "yonetici" and lifted.lifted_at is not None
    assert login(USERNAME, PASSWORD).status_code == 302 and len(mailoutbox) == mailed


def test_lock_outs_are_counted_by_scope_on_metrics_and_the_dashboard(owner):
    """Each counter reaching its limit is one lock-out: /metrics and the health dashboard count them."""
    guess_from_many_addresses()  # the username's limit (one failure per address: no pair's)
    for _ in range(5):
        login("baska-ajan", WRONG, ip="203.0.113.50")  # one pair's limit
    samples = {
        (s.name, s.labels.get("scope")): s.value for f in metric_families() for s in f.samples if "lockouts" in s.name
    }
    assert samples[("insurehub_login_lockouts", "username")] == 1
    assert samples[("insurehub_login_lockouts", "pair")] == 1
    assert samples[("insurehub_login_lockouts", "address")] == 0
    assert samples[("insurehub_login_lockouts_active", "username")] == 1

    admin_user = get_user_model().objects.create_superuser("yonetici", "yonetici@insurehub.example", PASSWORD)
    admin_client = Client()
    admin_client.force_login(admin_user)
    page = admin_client.get(reverse("integrations_health")).content.decode()
    assert 'id="login-lockouts"' in page and 'data-scope="username"' in page
