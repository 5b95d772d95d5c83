"""Payment tokens stored in clear before they were encrypted: encrypted now, or dropped where the
issuance is SUBMITTED (see quotes.services.issuance for what is kept how long)."""

from django.db import migrations

ENCRYPTED = "payment_token_encrypted"


def encrypt_clear_tokens(apps, schema_editor):
    from integrations.credentials import encrypt_secret

    Issuance = apps.get_model("quotes", "Issuance")
    for issuance in Issuance.objects.filter(payload__has_key="payment_token").only("pk", "state", "payload"):
        payload = dict(issuance.payload)
        clear = payload.pop("payment_token")
        if issuance.state != "SUBMITTED" and clear:
            payload[ENCRYPTED] = encrypt_secret(str(clear))
        Issuance.objects.filter(pk=issuance.pk).update(payload=payload)


class Migration(migrations.Migration):
    dependencies = [("quotes", "0003_view_all_agencies_permission")]

    # Not reversible to clear text on purpose: the tokens stay encrypted.
    operations = [migrations.RunPython(encrypt_clear_tokens, migrations.RunPython.noop)]
