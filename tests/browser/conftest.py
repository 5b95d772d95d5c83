"""Playwright driving Debian's Chromium against the live server, and screenshots kept as artifacts.

The browser is the system one (`scripts/install-browser.sh`); Playwright never downloads its own.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
REPO_ROOT = Path(__file__).resolve().parent.parent.parent
SCREENSHOTS_DIR = Path(os.environ.get("TEST_ARTIFACTS_DIR", str(REPO_ROOT / "test-artifacts"))) / "screenshots"
AGENT_PASSWORD = "test-pass-123"
# Generous: the worker is another process, and CI machines are slow.
TIMEOUT_MS = 20_000


@pytest.fixture(scope="session")
def browser() -> Iterator:
    if not os.access(CHROMIUM, os.X_OK):
        pytest.fail(f"{CHROMIUM} is missing: run scripts/install-browser.sh")
    from playwright.sync_api import sync_playwright

    # Playwright's sync API keeps an event loop in this thread, and Django refuses ORM calls from
    # a thread with a running loop; the test's own ORM calls are plain synchronous code.
    previous = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    try:
        with sync_playwright() as playwright:
            chromium = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
            yield chromium
            chromium.close()
    finally:
        if previous is None:
            os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
        else:
            os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = previous


@pytest.fixture
def browser_context(browser, live_server, settings) -> Iterator:
    """A fresh browser profile per test, speaking Turkish, on Istanbul time, on the demo desk
    (whose confirm step pre-fills the sandbox's card token: `DEMO_PAYMENT_TOKEN`)."""
    settings.DEMO_PAYMENT_TOKEN = "tok_demo_4242"
    from playwright.sync_api import expect

    expect.set_options(timeout=TIMEOUT_MS)
    context = browser.new_context(
        base_url=live_server.url,
        locale="tr-TR",
        timezone_id="Europe/Istanbul",
        viewport={"width": 1100, "height": 800},
    )
    context.set_default_timeout(TIMEOUT_MS)
    yield context
    context.close()


@pytest.fixture
def shot(request) -> Callable:
    """`shot(page, "step")` saves test-artifacts/screenshots/<test>-<nn>-<step>.png."""
    SCREENSHOTS_DIR.mkdir(parents=True, exist_ok=True)
    prefix = re.sub(r"[^A-Za-z0-9_.-]+", "_", request.node.name)
    for stale in SCREENSHOTS_DIR.glob(f"{prefix}-*.png"):  # a previous run's, maybe with other steps
        stale.unlink()
    taken: list[Path] = []

    def take(page, step: str) -> Path:
        path = SCREENSHOTS_DIR / f"{prefix}-{len(taken) + 1:02d}-{step}.png"
        page.screenshot(path=str(path), full_page=True)
        taken.append(path)
        return path

    return take


@pytest.fixture
def page(browser_context, shot) -> Iterator:
    page = browser_context.new_page()
    yield page
    # The last state of the page, whatever happened: the first thing to look at when a step failed.
    if not page.is_closed():
        shot(page, "end")


@pytest.fixture
def desk_agent(seeded_accounts, transactional_db):
    """An agent of ACENTE1 who logs in through the real login form."""
    from agencies.models import Agency, AgentProfile

    user = get_user_model().objects.create_user("ajan-tarayici", password=AGENT_PASSWORD)
    AgentProfile.objects.create(user=user, agency=Agency.objects.get(code="ACENTE1"))
    return user
