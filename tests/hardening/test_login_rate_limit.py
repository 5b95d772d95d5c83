"""Login lock-out (agencies.auth): per username and address, per address, per username; on every login door."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import pytest
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.contrib.auth.base_user import AbstractBaseUser
from django.db import connection
from django.http.response import HttpResponseBase
from django.test import Client
from django.urls import resolve
from django.utils import timezone
from rest_framework.test import APIClient

from agencies.auth import (
    RateLimitedLoginView,
    ThrottledAdminAuthenticationForm,
    ThrottledAuthTokenSerializer,
    address_key,
    client_ip,
    login_attempt_failed,
    login_attempt_start,
    login_lock_remaining,
)
from agencies.models import LoginFailure
from tests.hardening.conftest import PASSWORD

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.hardening.throttled_urls")]

USERNAME = "ajan-acente1"
LOCKED_TEXT = "Çok fazla hatalı giriş denemesi"
WRONG = "yanlis-parola"


@dataclass(frozen=True)
class Door:
    """One password entry point and what it answers: a success, a wrong password."""

    name: str
    post: Callable[..., HttpResponseBase]
    ok: int
    wrong: int


def _form_post(path: str) -> Callable[..., HttpResponseBase]:
    def post(username: str, password: str, ip: str = "203.0.113.7", **meta: Any) -> HttpResponseBase:
        return Client().post(path, {"username": username, "password": password}, REMOTE_ADDR=ip, **meta)

    return post


def _token_post(username: str, password: str, ip: str = "203.0.113.7", **meta: Any) -> HttpResponseBase:
    body = {"username": username, "password": password}
    return APIClient().post("/api/auth/token/", body, format="json", REMOTE_ADDR=ip, **meta)


DOORS = [
    Door("giris", _form_post("/giris/"), ok=302, wrong=200),
    Door("admin", _form_post("/admin/login/"), ok=302, wrong=200),
    Door("api-token", _token_post, ok=200, wrong=400),
]


@pytest.fixture(params=DOORS, ids=[door.name for door in DOORS])
def door(request) -> Door:
    return request.param


@pytest.fixture
def staff(transactional_db) -> list:
    """Two logins that every door accepts (staff, so the admin login lets them in too)."""
    model = get_user_model()
    return [model.objects.create_user(name, password=PASSWORD, is_staff=True) for name in (USERNAME, "ajan-acente2")]


def assert_locked(response, door: Door) -> None:
    assert response.status_code == 429, (door.name, response.status_code)
    assert 1 <= int(response["Retry-After"]) <= 900
    text = response.json()["detail"] if door.name == "api-token" else response.content.decode()
    assert LOCKED_TEXT in text


def fail(door: Door, times: int, username: str = USERNAME, **kwargs: str) -> None:
    for _ in range(times):
        response = door.post(username, WRONG, **kwargs)
        # The wrong-password answer, or 429 from the failure that starts the lock.
        assert response.status_code in (door.wrong, 429)


# --- One username from one address ------------------------------------------------------


def test_fifth_wrong_password_locks_the_pair_with_a_turkish_message(staff, door):
    """After five failures even the right password is refused: 429, Retry-After, the lock-out in Turkish."""
    fail(door, 4)
    response = door.post(USERNAME, WRONG)
    assert_locked(response, door)
    assert 899 <= int(response["Retry-After"]) <= 900
    assert_locked(door.post(USERNAME, PASSWORD), door)


def test_ordinary_wrong_password_keeps_the_plain_message(staff):
    response = DOORS[0].post(USERNAME, WRONG)
    assert response.context["form"].non_field_errors() == ["Kullanıcı adı veya parola hatalı."]
    assert "15 dakika" not in response.content.decode()


def test_pair_lock_leaves_other_addresses_and_users_free(staff, door):
    """A lock on one pair leaves the same user from another address, and another user, free to log in."""
    fail(door, 5)
    assert door.post(USERNAME, PASSWORD, ip="198.51.100.9").status_code == door.ok
    assert door.post("ajan-acente2", PASSWORD).status_code == door.ok
    # Counted case-insensitively: changing the case of the username does not buy more tries.
    assert door.post(USERNAME.upper(), PASSWORD).status_code == 429


def test_success_clears_the_pairs_failures(staff, door):
    fail(door, 4)
    assert door.post(USERNAME, PASSWORD).status_code == door.ok
    fail(door, 4)  # four more wrong ones do not lock: the count started again
    assert door.post(USERNAME, PASSWORD).status_code == door.ok


def test_lock_ends_after_fifteen_minutes(staff):
    door = DOORS[0]
    fail(door, 5)
    LoginFailure.objects.update(locked_until=timezone.now() - timedelta(seconds=1))
    assert door.post(USERNAME, PASSWORD).status_code == 302
    assert not LoginFailure.objects.exists()


def test_old_failures_do_not_count(staff):
    """Failures older than the 15-minute window are forgotten: four, then later one more, do not lock."""
    door = DOORS[0]
    fail(door, 4)
    LoginFailure.objects.update(window_started_at=timezone.now() - timedelta(minutes=16))
    fail(door, 1)
    assert door.post(USERNAME, PASSWORD).status_code == 302


def test_counter_lives_in_the_database_for_every_worker(staff):
    """Failures recorded elsewhere (another worker process) count here: the state is the database rows."""
    for _ in range(5):
        login_attempt_failed(login_attempt_start(username=USERNAME, ip_address="203.0.113.7"))
    pair = LoginFailure.objects.get(username=USERNAME, ip_address="203.0.113.7")
    assert pair.failures == 5 and pair.locked_until > timezone.now()
    assert login_lock_remaining(username=USERNAME, ip_address="203.0.113.7") > 0
    assert DOORS[0].post(USERNAME, PASSWORD).status_code == 429


def test_doors_share_one_count(staff):
    """Two wrong passwords at the API, two at the admin, one at the login page: the fifth locks all three."""
    fail(DOORS[2], 2)
    fail(DOORS[1], 2)
    assert DOORS[0].post(USERNAME, WRONG).status_code == 429
    for door in DOORS:
        assert_locked(door.post(USERNAME, PASSWORD), door)


# --- Parallel guesses ---------------------------------------------------------------------


def test_parallel_wrong_passwords_judge_at_most_five(staff, door, monkeypatch):
    """Twenty simultaneous guesses for one user: the count is taken before judging, so five are judged."""
    judged: list[str] = []
    real_check = AbstractBaseUser.check_password

    def slow_check(user, raw_password):
        judged.append(raw_password)
        time.sleep(0.3)  # a slow hash: every parallel request is in flight at once
        return real_check(user, raw_password)

    monkeypatch.setattr(AbstractBaseUser, "check_password", slow_check)
    start = threading.Barrier(20)
    statuses: list[int] = []

    def guess(n: int) -> None:
        try:
            start.wait()
            statuses.append(door.post(USERNAME, f"tahmin-{n}").status_code)
        finally:
            connection.close()

    threads = [threading.Thread(target=guess, args=(n,)) for n in range(20)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert len(statuses) == 20
    assert 1 <= len(judged) <= 5, f"{len(judged)} passwords judged"
    assert statuses.count(429) >= 15
    assert_locked(door.post(USERNAME, PASSWORD), door)


# --- Addresses: IPv6 prefixes, spraying, many addresses ----------------------------------


def test_ipv6_addresses_within_one_64_are_one_address(staff, door):
    """Rotating the interface part of an IPv6 address buys no tries; another /64 is someone else."""
    for host in range(1, 6):
        door.post(USERNAME, WRONG, ip=f"2001:db8:1:2::{host:x}")
    assert_locked(door.post(USERNAME, PASSWORD, ip="2001:db8:1:2:ffff:ffff:ffff:ffff"), door)
    assert door.post(USERNAME, PASSWORD, ip="2001:db8:1:3::1").status_code == door.ok


def test_address_key_groups_ipv6_by_64_and_keeps_ipv4_whole():
    assert address_key("2001:db8:1:2:aaaa::1") == address_key("2001:DB8:1:2::ffff") == "2001:db8:1:2::/64"
    assert address_key("203.0.113.7") == "203.0.113.7" != address_key("203.0.113.8")
    assert address_key("::ffff:203.0.113.7") == "203.0.113.7"  # an IPv4 client seen through a dual stack
    assert address_key("") == ""


def test_one_password_sprayed_over_many_usernames_locks_the_address(staff, door):
    """Twenty failures from one address, each for a different username, lock that address for every username."""
    for n in range(20):
        door.post(f"kullanici-{n}", WRONG, ip="192.0.2.50")
    assert_locked(door.post(USERNAME, PASSWORD, ip="192.0.2.50"), door)
    assert door.post(USERNAME, PASSWORD, ip="192.0.2.51").status_code == door.ok


def test_nineteen_sprayed_failures_and_own_logins_do_not_lock_the_address(staff, door):
    """Below the address limit the address is free; a success from it does not wash out others' failures."""
    for n in range(19):
        door.post(f"kullanici-{n}", WRONG, ip="192.0.2.60")
    assert door.post(USERNAME, PASSWORD, ip="192.0.2.60").status_code == door.ok
    door.post("kullanici-x", WRONG, ip="192.0.2.60")  # the twentieth
    assert_locked(door.post("ajan-acente2", PASSWORD, ip="192.0.2.60"), door)


def test_one_username_guessed_from_many_addresses_asks_everyone_for_the_mailed_code(staff, door):
    """Ten failures for one username from ten addresses: that username's password is no longer judged
    without the code mailed to the account (tests/hardening/test_login_step_up.py); others log in."""
    for n in range(10):
        door.post(USERNAME, WRONG, ip=f"198.51.100.{n + 1}")
    asked = door.post(USERNAME, PASSWORD, ip="203.0.113.200")
    assert asked.status_code == (400 if door.name == "api-token" else 200)
    text = asked.json()["code"][0] if door.name == "api-token" else asked.content.decode()
    assert "tek kullanımlık bir giriş kodu" in text
    assert door.post("ajan-acente2", PASSWORD, ip="203.0.113.200").status_code == door.ok


# --- Proxies ------------------------------------------------------------------------------


def test_forwarded_for_is_ignored_without_a_trusted_proxy(staff, door):
    """Without LOGIN_TRUSTED_PROXY_COUNT a forged X-Forwarded-For changes nothing: REMOTE_ADDR is counted."""
    for n in range(5):
        door.post(USERNAME, WRONG, ip="203.0.113.7", HTTP_X_FORWARDED_FOR=f"10.9.9.{n}")
    assert_locked(door.post(USERNAME, PASSWORD, ip="203.0.113.7", HTTP_X_FORWARDED_FOR="10.9.9.99"), door)


def test_behind_a_trusted_proxy_each_client_has_its_own_count(staff, door, settings):
    """With one trusted proxy, a client locking itself out does not lock out the others behind the same proxy."""
    settings.LOGIN_TRUSTED_PROXY_COUNT = 1
    proxy = "10.0.0.2"
    for _ in range(5):
        door.post(USERNAME, WRONG, ip=proxy, HTTP_X_FORWARDED_FOR="198.51.100.20")
    assert_locked(door.post(USERNAME, PASSWORD, ip=proxy, HTTP_X_FORWARDED_FOR="198.51.100.20"), door)
    # A forged entry to the left of what the proxy appended does not help the locked client...
    forged = "203.0.113.99, 198.51.100.20"
    assert door.post(USERNAME, PASSWORD, ip=proxy, HTTP_X_FORWARDED_FOR=forged).status_code == 429
    # ...and another client behind the same proxy logs in.
    assert door.post(USERNAME, PASSWORD, ip=proxy, HTTP_X_FORWARDED_FOR="198.51.100.21").status_code == door.ok


def test_forwarded_address_is_the_nth_from_the_right(rf, settings):
    request = rf.get("/", REMOTE_ADDR="10.0.0.2", HTTP_X_FORWARDED_FOR="6.6.6.6, 203.0.113.7, 10.0.0.1")
    assert client_ip(request) == "10.0.0.2"  # no proxy configured: the header is anyone's to forge
    settings.LOGIN_TRUSTED_PROXY_COUNT = 1
    assert client_ip(request) == "10.0.0.1"
    settings.LOGIN_TRUSTED_PROXY_COUNT = 2
    assert client_ip(request) == "203.0.113.7"  # the entry our outer proxy appended; 6.6.6.6 is the client's say
    settings.LOGIN_TRUSTED_PROXY_COUNT = 4  # fewer entries than proxies: not through our proxies
    assert client_ip(request) == "10.0.0.2"


@pytest.mark.urls("insurehub.urls")
def test_project_urls_use_the_rate_limited_login():
    """The project's own `giris/`, admin login and API token exchange all use the shared lock-out."""
    assert resolve("/giris/").func.view_class is RateLimitedLoginView
    assert admin.site.login_form is ThrottledAdminAuthenticationForm
    assert getattr(resolve("/admin/login/").func, "throttled", False)
    assert resolve("/api/auth/token/").func.view_class.serializer_class is ThrottledAuthTokenSerializer
