"""The customer's payment token: encrypted at rest, in clear only on the wire, gone once final."""

from __future__ import annotations

import importlib
import json
from datetime import timedelta

import pytest
from django.apps import apps
from django.db import connection
from django.utils import timezone

from integrations.adapters.registry import registered_codes
from integrations.credentials import decrypt_secret
from quotes.models import InsurerQuote, Issuance
from quotes.services import issuance as svc
from sandbox.domain import DECLINED_PAYMENT_TOKEN
from tests import samples
from tests.quotes.test_issuance import quoted
from work.item import WorkState
from work.replay import dead_letters_replay

pytestmark = pytest.mark.django_db

INSURERS = registered_codes()


def start(agents, row: InsurerQuote, token: str = samples.PAYMENT_TOKEN) -> Issuance:
    return svc.issuance_start(user=agents["ACENTE1"], insurer_quote_id=row.id, payment_token=token)


def stored_payload(issuance: Issuance) -> str:
    """The payload column as the database holds it, past any model or admin code."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT payload FROM quotes_issuance WHERE id = %s", [issuance.pk])
        (raw,) = cursor.fetchone()
    return raw if isinstance(raw, str) else json.dumps(raw)


def test_stored_payload_never_holds_the_clear_token(agents, sandbox):
    """Right after the agent confirms, the row holds only the encrypted token."""
    issuance = start(agents, quoted(agents, "anka"))
    raw = stored_payload(issuance)
    assert samples.PAYMENT_TOKEN not in raw and "4242" not in raw
    encrypted = json.loads(raw)[svc.ENCRYPTED_TOKEN_KEY]
    assert decrypt_secret(encrypted) == samples.PAYMENT_TOKEN


@pytest.mark.parametrize("code", INSURERS)
def test_issuance_works_and_the_token_is_gone_once_submitted(agents, sandbox, quick_issuance_policy, code):
    """Each insurer gets the token in clear and issues; the SUBMITTED row keeps no token at all."""
    issuance = start(agents, quoted(agents, code))
    assert svc.issuance_process(issuance.pk) == "SUBMITTED"
    raw = json.loads(stored_payload(issuance))
    assert "payment_token" not in raw and svc.ENCRYPTED_TOKEN_KEY not in raw
    assert raw["quote_no"] == issuance.insurer_quote.quote_no
    assert sandbox[code].state.counts()["issued_total"] == 1


@pytest.mark.parametrize("code", INSURERS)
def test_the_insurer_reads_the_decrypted_token(agents, sandbox, quick_issuance_policy, code):
    """A declined card is declined by every insurer: what they read is the token, not its ciphertext."""
    issuance = start(agents, quoted(agents, code), token=DECLINED_PAYMENT_TOKEN)
    assert svc.issuance_process(issuance.pk) == "FAILED"
    assert sandbox[code].state.counts()["issued_total"] == 0


def test_failed_issuance_keeps_its_token_encrypted_for_a_replay(agents, sandbox, quick_issuance_policy):
    """FAILED keeps the encrypted token: the replay after a fix issues without asking the customer."""
    issuance = start(agents, quoted(agents, "deniz"))
    sandbox["deniz"].state.add_faults([{"operation": "issue_policy", "fault": "reject", "reason": "Ödeme reddedildi"}])
    assert svc.issuance_process(issuance.pk) == "FAILED"
    raw = stored_payload(issuance)
    assert samples.PAYMENT_TOKEN not in raw and svc.ENCRYPTED_TOKEN_KEY in raw
    assert svc.issuance_payment_tokens_purge() == 0  # within the retention
    assert dead_letters_replay(ids=[issuance.pk], model=Issuance) == [issuance.pk]
    assert svc.issuance_process(issuance.pk) == "SUBMITTED"
    assert svc.ENCRYPTED_TOKEN_KEY not in stored_payload(issuance)


def test_token_is_purged_after_the_retention_and_a_late_replay_fails_unsent(agents, sandbox, quick_issuance_policy):
    """Past the retention a FAILED issuance loses its token; replaying it fails at once, nothing sent."""
    issuance = start(agents, quoted(agents, "anka"), token=DECLINED_PAYMENT_TOKEN)
    assert svc.issuance_process(issuance.pk) == "FAILED"
    Issuance.objects.filter(pk=issuance.pk).update(
        finished_at=timezone.now() - svc.PAYMENT_TOKEN_RETENTION - timedelta(minutes=1)
    )
    assert svc.issuance_payment_tokens_purge() == 1
    assert "payment_token" not in stored_payload(issuance)
    sent_before = sandbox["anka"].state.counts()["received"].get("issue_policy", 0)
    assert dead_letters_replay(ids=[issuance.pk], model=Issuance) == [issuance.pk]
    assert svc.issuance_process(issuance.pk) == "FAILED"
    issuance.refresh_from_db()
    assert issuance.provider_code == "PAYMENT_TOKEN_GONE"
    assert svc.PAYMENT_TOKEN_GONE_MESSAGE in issuance.error_message
    assert sandbox["anka"].state.counts()["received"].get("issue_policy", 0) == sent_before


def test_migration_encrypts_clear_tokens_and_drops_submitted_ones(agents, sandbox):
    """Rows written before encryption: open ones get the token encrypted, submitted ones lose it."""
    open_one = start(agents, quoted(agents, "anka"))
    done_one = start(agents, quoted(agents, "cinar"))
    for row in (open_one, done_one):
        Issuance.objects.filter(pk=row.pk).update(
            payload={"quote_no": row.insurer_quote.quote_no, "payment_token": samples.PAYMENT_TOKEN}
        )
    Issuance.objects.filter(pk=done_one.pk).update(state=WorkState.SUBMITTED)
    migration = importlib.import_module("quotes.migrations.0004_encrypt_payment_tokens")
    migration.encrypt_clear_tokens(apps, None)
    open_raw, done_raw = json.loads(stored_payload(open_one)), json.loads(stored_payload(done_one))
    assert samples.PAYMENT_TOKEN not in json.dumps(open_raw) + json.dumps(done_raw)
    assert decrypt_secret(open_raw[svc.ENCRYPTED_TOKEN_KEY]) == samples.PAYMENT_TOKEN
    assert set(done_raw) == {"quote_no"}
