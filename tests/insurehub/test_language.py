"""The product speaks Turkish only, whatever language the browser prefers."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.django_db


def test_a_browser_that_prefers_english_still_gets_turkish(client):
    page = client.get("/admin/login/", HTTP_ACCEPT_LANGUAGE="en-US,en;q=0.9").content.decode()
    assert "Kullanıcı adı" in page
    assert "Username" not in page
