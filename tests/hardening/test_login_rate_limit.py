"""Login rate limiting (agencies.auth): five wrong passwords lock a username from an address for 15 minutes."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib import admin
from django.test import Client
from django.urls import resolve
from django.utils import timezone
from rest_framework.test import APIClient

from agencies.auth import (
    RateLimitedLoginView,
    ThrottledAdminAuthenticationForm,
    ThrottledAuthTokenSerializer,
    client_ip,
    login_failure_record,
    login_lock_remaining,
)
from agencies.models import LoginFailure
from tests.hardening.conftest import PASSWORD

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.hardening.throttled_urls")]

USERNAME = "ajan-acente1"
LOCKED_TEXT = "Çok fazla hatalı giriş denemesi"


def login(client: Client, password: str, username: str = USERNAME, ip: str = "203.0.113.7"):
    return client.post("/giris/", {"username": username, "password": password}, REMOTE_ADDR=ip)


def fail(times: int, **kwargs) -> None:
    client = Client()
    for _ in range(times):
        response = login(client, "yanlis-parola", **kwargs)
        # 200 with the form again; 429 from the failure that starts the lock.
        assert response.status_code in (200, 429) and not response.wsgi_request.user.is_authenticated


def test_fifth_wrong_password_locks_the_username_with_a_turkish_message(agents):
    """After five failures even the right password is refused: 429, Retry-After, the lockout in Turkish."""
    fail(4)
    response = login(Client(), "yanlis-parola")
    assert response.status_code == 429 and 899 <= int(response["Retry-After"]) <= 900
    assert any(LOCKED_TEXT in error for error in response.context["form"].non_field_errors())
    response = login(Client(), PASSWORD)
    assert response.status_code == 429 and not response.wsgi_request.user.is_authenticated
    assert "15 dakika" in response.context["form"].non_field_errors()[0]


def test_ordinary_wrong_password_keeps_the_plain_message(agents):
    response = login(Client(), "yanlis-parola")
    assert response.context["form"].non_field_errors() == ["Kullanıcı adı veya parola hatalı."]


def test_lockout_is_per_username_and_address(agents):
    """A lock on one pair leaves the same user from another address, and another user, free to log in."""
    fail(5)
    assert login(Client(), PASSWORD, ip="198.51.100.9").status_code == 302
    assert login(Client(), PASSWORD, username="ajan-acente2").status_code == 302
    # Counted case-insensitively: changing the case of the username does not buy more tries.
    assert login(Client(), PASSWORD, username=USERNAME.upper()).status_code == 429


def test_success_clears_the_failures(agents):
    fail(4)
    assert login(Client(), PASSWORD).status_code == 302
    fail(4)  # four more wrong ones do not lock: the count started again
    assert login(Client(), PASSWORD).status_code == 302


def test_lock_ends_after_fifteen_minutes(agents):
    fail(5)
    LoginFailure.objects.update(locked_until=timezone.now() - timedelta(seconds=1))
    assert login(Client(), PASSWORD).status_code == 302
    assert not LoginFailure.objects.exists()


def test_old_failures_do_not_count(agents):
    """Failures older than the 15-minute window are forgotten: four, then later one more, do not lock."""
    fail(4)
    LoginFailure.objects.update(window_started_at=timezone.now() - timedelta(minutes=16))
    fail(1)
    assert login(Client(), PASSWORD).status_code == 302


def test_counter_lives_in_the_database_for_every_worker(agents):
    """Failures recorded elsewhere (another worker process) count here: the state is the database row."""
    for _ in range(5):
        login_failure_record(username=USERNAME, ip_address="203.0.113.7")
    assert LoginFailure.objects.get().locked_until > timezone.now()
    assert login_lock_remaining(username=USERNAME, ip_address="203.0.113.7") > 0
    assert login(Client(), PASSWORD).status_code == 429


def test_api_token_endpoint_shares_the_lockout(agents):
    """The API's password exchange is locked by the same counter, answering 429 with Retry-After."""
    client = APIClient()
    body = {"username": USERNAME, "password": "yanlis-parola"}
    for _ in range(4):
        assert client.post("/api/auth/token/", body, format="json", REMOTE_ADDR="203.0.113.7").status_code == 400
    response = client.post("/api/auth/token/", body, format="json", REMOTE_ADDR="203.0.113.7")
    assert response.status_code == 429 and int(response["Retry-After"]) > 0
    assert LOCKED_TEXT in response.json()["detail"]
    right = {"username": USERNAME, "password": PASSWORD}
    assert client.post("/api/auth/token/", right, format="json", REMOTE_ADDR="203.0.113.7").status_code == 429
    assert login(Client(), PASSWORD).status_code == 429  # the web login sees the same lock


def test_admin_login_shares_the_lockout(agents):
    """The admin login (its form set in AgenciesConfig.ready) counts and refuses like the agents' login."""
    fail(5)
    response = Client().post("/admin/login/", {"username": USERNAME, "password": PASSWORD}, REMOTE_ADDR="203.0.113.7")
    assert response.status_code == 200 and LOCKED_TEXT in response.content.decode()


def test_forwarded_address_is_read_only_behind_trusted_proxies(rf, settings):
    request = rf.get("/", REMOTE_ADDR="10.0.0.2", HTTP_X_FORWARDED_FOR="6.6.6.6, 203.0.113.7")
    assert client_ip(request) == "10.0.0.2"  # no proxy configured: the header is anyone's to forge
    settings.LOGIN_TRUSTED_PROXY_COUNT = 1
    assert client_ip(request) == "203.0.113.7"  # the entry our one proxy appended


@pytest.mark.urls("insurehub.urls")
def test_project_urls_use_the_rate_limited_login():
    """The project's own `giris/`, admin login and API token exchange all use the shared lockout."""
    assert resolve("/giris/").func.view_class is RateLimitedLoginView
    assert admin.site.login_form is ThrottledAdminAuthenticationForm
    assert resolve("/api/auth/token/").func.view_class.serializer_class is ThrottledAuthTokenSerializer
