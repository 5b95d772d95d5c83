"""Reads of policy documents, scoped like every other read (`quotes.selectors`).

Reading crosses agencies only with `quotes.view_all_agencies` (a head office may hand any
agency's customer their PDF); a re-fetch does not (`documents.services.document_refetch`).
"""

from __future__ import annotations

from typing import IO

from django.contrib.auth.models import User
from django.core.files.storage import default_storage
from django.utils.text import get_valid_filename

from agencies.scope import may_act_on
from documents.models import PolicyDocument
from policies.models import Policy
from quotes import selectors as quote_selectors


def policy_for_document(*, user: User, policy_id: int) -> Policy:
    """The policy, if the user may read it; another agency's raises `Policy.DoesNotExist` (404)."""
    return quote_selectors.policy_list(user=user).select_related("insurer", "agency").get(pk=policy_id)


def document_of(policy: Policy) -> PolicyDocument | None:
    """The policy's document record, or None when none has been asked for yet."""
    return PolicyDocument.objects.select_related("policy__insurer").filter(policy=policy).first()


def document_downloadable(*, user: User, policy_id: int) -> PolicyDocument:
    """The document to download: the user may read the policy and a file is stored (during a
    re-fetch, the previous one). Raises `Policy.DoesNotExist` or `PolicyDocument.DoesNotExist`."""
    policy = policy_for_document(user=user, policy_id=policy_id)
    return PolicyDocument.objects.select_related("policy__insurer").exclude(file="").get(policy=policy)


def may_refetch(*, user: User, policy: Policy) -> bool:
    """Only the policy's own scope re-fetches (`agencies.scope`): it spends that agency's insurer account."""
    return may_act_on(user, agency_id=policy.agency_id, sub_agency_id=policy.sub_agency_id)


def document_file_open(document: PolicyDocument) -> IO[bytes]:
    """The stored PDF, opened for reading from whichever storage holds it."""
    return default_storage.open(document.file.name, "rb")


def document_download_name(document: PolicyDocument) -> str:
    """What the browser saves it as: `police-<insurer>-<policy no>.pdf`, safe in a header."""
    policy = document.policy
    return get_valid_filename(f"police-{policy.insurer.code}-{policy.policy_no}") + ".pdf"
