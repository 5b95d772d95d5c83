"""The first version of each channel's consent text, so an agent can record consent from day one.
A new wording is added as version 2 (admin), never by editing this one."""

from django.db import migrations
from django.utils import timezone

TEXTS = {
    "email": (
        "Sigorta acentemizin; poliçelerimin yenileme hatırlatmalarını, sigorta tekliflerini ve bu "
        "tekliflerle ilgili bilgilendirmeleri e-posta adresime göndermesine, 6698 sayılı Kişisel "
        "Verilerin Korunması Kanunu ve 6563 sayılı Elektronik Ticaretin Düzenlenmesi Hakkında Kanun "
        "kapsamında onay veriyorum. Bu onayı dilediğim zaman, acenteye bildirerek geri alabilirim."
    ),
    "sms": (
        "Sigorta acentemizin; poliçelerimin yenileme hatırlatmalarını, sigorta tekliflerini ve bu "
        "tekliflerle ilgili bilgilendirmeleri cep telefonuma SMS ile göndermesine, 6698 sayılı Kişisel "
        "Verilerin Korunması Kanunu ve 6563 sayılı Elektronik Ticaretin Düzenlenmesi Hakkında Kanun "
        "kapsamında onay veriyorum. Bu onayı dilediğim zaman, acenteye bildirerek geri alabilirim."
    ),
}


def seed(apps, schema_editor):
    ConsentText = apps.get_model("outreach", "ConsentText")
    for channel, text in TEXTS.items():
        ConsentText.objects.get_or_create(
            channel=channel, version=1, defaults={"text": text, "published_at": timezone.now()}
        )


def unseed(apps, schema_editor):
    apps.get_model("outreach", "ConsentText").objects.filter(version=1).delete()


class Migration(migrations.Migration):
    dependencies = [("outreach", "0001_initial")]

    operations = [migrations.RunPython(seed, unseed)]
