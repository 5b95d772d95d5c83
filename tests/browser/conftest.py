"""Playwright driving Debian's Chromium against the live server, and screenshots kept as artifacts.

The browser is the system one (`scripts/install-browser.sh`); Playwright never downloads its own.
Every page a test opens is watched for Content-Security-Policy violations (`CspWatch`): one is a
failure of that test, whatever else it checked, because it is a script or style the product
meant to run and the browser refused, or something that should never have been on the page.
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


# Reports each violation to the test the moment the browser refuses something, on every page and
# every navigation of the context (an init script runs before any of the page's own).
CSP_LISTENER = """
document.addEventListener("securitypolicyviolation", (event) => {
  window.__insurehubCspViolation({
    page: document.location.href,
    directive: event.effectiveDirective || event.violatedDirective,
    blocked: event.blockedURI,
    source: event.sourceFile,
    line: event.lineNumber,
    sample: event.sample,
  });
  window.__insurehubCspSeen = (window.__insurehubCspSeen || 0) + 1;
}, true);
"""


class CspWatch:
    """The Content-Security-Policy violations one browser context met: the page's
    `securitypolicyviolation` events and Chromium's console errors that name the policy."""

    def __init__(self, context) -> None:
        self.context = context
        self.violations: list[str] = []
        context.expose_binding("__insurehubCspViolation", lambda source, report: self._record(report))
        context.add_init_script(CSP_LISTENER)
        context.on("console", self._console)

    def _record(self, report: dict) -> None:
        self.violations.append(
            "{directive} refused {blocked} on {page} ({source}:{line}) {sample}".format(
                **{key: report.get(key) or "" for key in ("directive", "blocked", "page", "source", "line", "sample")}
            )
        )

    def _console(self, message) -> None:
        if message.type == "error" and "Content Security Policy" in message.text:
            self.violations.append(f"console: {message.text}")

    def settle(self) -> None:
        """Let reports already sent by the pages arrive (they come asynchronously)."""
        from playwright.sync_api import Error

        for page in self.context.pages:
            try:
                page.evaluate("() => new Promise((done) => setTimeout(done, 50))")
            except Error:  # closed, or navigating: nothing more will come from that document
                pass

    def take(self) -> list[str]:
        """The violations so far, forgotten: for a test that provokes some on purpose."""
        self.settle()
        taken, self.violations = self.violations, []
        return taken

    def assert_clean(self) -> None:
        found = self.take()
        if found:
            pytest.fail("Content-Security-Policy violations:\n" + "\n".join(found), pytrace=False)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    """A violation fails the test itself, as its last check (the context's teardown checks again
    for any that came later)."""
    result = yield
    context = getattr(item, "funcargs", {}).get("browser_context")
    if context is not None:
        context.csp_watch.assert_clean()
    return result


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
    context.csp_watch = CspWatch(context)
    yield context
    try:
        context.csp_watch.assert_clean()
    finally:
        context.close()


@pytest.fixture
def csp_watch(browser_context) -> CspWatch:
    """This test's violations so far (`take()` them when the test provokes some on purpose)."""
    return browser_context.csp_watch


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
