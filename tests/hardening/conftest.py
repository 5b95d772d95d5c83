"""Fixtures for the hardening suite: one agent login per sample agency, as in the quote desk tests."""

from __future__ import annotations

from tests.throttles import fresh_api_throttles  # noqa: F401 - an autouse fixture

# The password of the `agents` fixture (tests/conftest.py).
PASSWORD = "test-pass-123"
