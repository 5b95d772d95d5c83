"""Fixtures for policy documents: issued policies (through the real flow, against the sandbox
insurers over HTTP), quick retry policies, and a private MEDIA_ROOT per test."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission

from documents.models import PolicyDocument
from integrations.adapters.registry import registered_codes
from integrations.models import Insurer, OperationPolicy
from integrations.retry_policies import clear_policy_cache
from policies.models import Policy
from tests.quotes.conftest import quick_issuance_policy  # noqa: F401 - a fixture
from tests.quotes.policy_samples import really_issued
from tests.quotes.request_samples import tasks_not_sent

INSURERS = registered_codes()


@pytest.fixture(autouse=True)
def media_root(settings, tmp_path):
    """Every stored PDF lands in this test's own directory, through `default_storage`."""
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.STORAGES = {**settings.STORAGES, "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"}}
    return settings.MEDIA_ROOT


@pytest.fixture
def quick_document_policy(seeded_accounts):
    """Short timeouts and backoff for policy_document, so a retry is due within a second."""
    quick = {"max_attempts": 3, "base_delay": 0.05, "max_delay": 0.2, "deadline": 10.0, "attempt_timeout": 2.0}
    for insurer in Insurer.objects.all():
        OperationPolicy.objects.update_or_create(insurer=insurer, operation="policy_document", defaults=quick)
    clear_policy_cache()
    yield
    clear_policy_cache()


@pytest.fixture
def issue(agents, sandbox, quick_issuance_policy, quick_document_policy, monkeypatch) -> Callable[..., Policy]:  # noqa: F811
    """Issue a trafik policy at `code` for ACENTE1 (or `agency`) through the quote desk's services.

    Issuing asks for the policy's document at once (tests/quotes/test_issuance_followups.py);
    these tests start from a policy without one, unless `with_document`. No task is sent for the
    request or the issuance: the fixture works them itself, so a qcluster an earlier test of the
    session started cannot take the issuance first (this call would then find it in flight).
    """
    tasks_not_sent(monkeypatch)

    def make(code: str, agency: str = "ACENTE1", *, with_document: bool = False) -> Policy:
        policy = really_issued(agents[agency], code)
        if not with_document:
            PolicyDocument.objects.filter(policy=policy).delete()
        return policy

    return make


@pytest.fixture
def head_office(db):
    """A reader of every agency (`quotes.view_all_agencies`) who belongs to no agency."""
    user = get_user_model().objects.create_user("merkez-okur", password="test-pass-123")
    user.user_permissions.add(Permission.objects.get(codename="view_all_agencies"))
    return user
