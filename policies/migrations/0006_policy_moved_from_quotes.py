"""The Policy model moved from the desk app (quotes) to policies; its table, `quotes_policy`,
stays where it is, so this changes Django's picture of the models only, never a row or a column.
The content type follows the model, so its admin permissions stay granted."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


def content_type_follows(apps, schema_editor):
    """Relabel quotes.policy as policies.policy (a database that never had it has nothing to do)."""
    content_types = apps.get_model("contenttypes", "ContentType")
    if not content_types.objects.filter(app_label="policies", model="policy").exists():
        content_types.objects.filter(app_label="quotes", model="policy").update(app_label="policies")


def content_type_returns(apps, schema_editor):
    content_types = apps.get_model("contenttypes", "ContentType")
    if not content_types.objects.filter(app_label="quotes", model="policy").exists():
        content_types.objects.filter(app_label="policies", model="policy").update(app_label="quotes")


class Migration(migrations.Migration):

    dependencies = [
        ('contenttypes', '0002_remove_content_type_name'),
        ('agencies', '0008_sub_agency_user_is_no_agency_admin'),
        ('customers', '0004_customer_sub_agency'),
        ('integrations', '0014_turkish_choice_labels'),
        ('policies', '0005_merge_0004_renewalreminder_0004_turkish_admin_labels'),
        ('quotes', '0012_policy_sold_by_policy_sub_agency_and_more'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name='Policy',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('product', models.CharField(choices=[('trafik', 'trafik'), ('kasko', 'kasko'), ('dask', 'dask')], max_length=16, verbose_name='ürün')),
                        ('policy_no', models.CharField(max_length=64, verbose_name='poliçe no')),
                        ('status', models.CharField(choices=[('ACTIVE', 'Yürürlükte'), ('CANCELLED', 'İptal'), ('EXPIRED', 'Süresi doldu')], default='ACTIVE', max_length=16, verbose_name='durum')),
                        ('plate', models.CharField(blank=True, max_length=16, verbose_name='plaka')),
                        ('owner_id', models.CharField(blank=True, max_length=11, verbose_name='sigortalı TCKN / VKN')),
                        ('premium', models.DecimalField(blank=True, decimal_places=2, max_digits=12, null=True, verbose_name='prim')),
                        ('installments', models.PositiveSmallIntegerField(default=1, verbose_name='taksit sayısı')),
                        ('starts_on', models.DateField(blank=True, null=True, verbose_name='başlangıç')),
                        ('ends_on', models.DateField(blank=True, db_index=True, null=True, verbose_name='bitiş')),
                        ('issued_at', models.DateTimeField(auto_now_add=True, verbose_name='düzenlenme')),
                        ('source', models.CharField(choices=[('platform', 'Platformda düzenlendi'), ('import', 'Dosyadan aktarıldı'), ('insurer_list', 'Şirket listesinden')], default='platform', max_length=16, verbose_name='kaynak')),
                        ('last_synced_at', models.DateTimeField(blank=True, null=True, verbose_name='son eşitleme')),
                        ('account', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='policies', to='integrations.insureraccount', verbose_name='şirket hesabı')),
                        ('agency', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='policies', to='agencies.agency', verbose_name='acente')),
                        ('customer', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='policies', to='customers.customer', verbose_name='müşteri')),
                        ('insurer', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='policies', to='integrations.insurer', verbose_name='sigorta şirketi')),
                        ('issuance', models.OneToOneField(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='policy', to='quotes.issuance', verbose_name='poliçeleştirme')),
                        ('sold_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='+', to=settings.AUTH_USER_MODEL, verbose_name='satan')),
                        ('sub_agency', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='+', to='agencies.subagency', verbose_name='tali acente')),
                    ],
                    options={
                        'verbose_name': 'poliçe',
                        'verbose_name_plural': 'poliçeler',
                        'db_table': 'quotes_policy',
                        'ordering': ['-issued_at'],
                    },
                ),
                migrations.AlterField(
                    model_name='cancellation',
                    name='policy',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='cancellations', to='policies.policy', verbose_name='poliçe'),
                ),
                migrations.AlterField(
                    model_name='policyfinding',
                    name='original',
                    field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='duplicates_found', to='policies.policy', verbose_name='asıl poliçe'),
                ),
                migrations.AlterField(
                    model_name='policyfinding',
                    name='policy',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='findings', to='policies.policy', verbose_name='poliçe'),
                ),
                migrations.AlterField(
                    model_name='renewalreminder',
                    name='policy',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='renewal_reminders', to='policies.policy', verbose_name='poliçe'),
                ),
                migrations.AddConstraint(
                    model_name='policy',
                    constraint=models.UniqueConstraint(fields=('insurer', 'policy_no'), name='policy_no_unique_per_insurer'),
                ),
            ],
            database_operations=[migrations.RunPython(content_type_follows, content_type_returns)],
        ),
    ]
