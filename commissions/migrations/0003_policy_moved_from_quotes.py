"""The policy foreign key follows the Policy model into the policies app; the column and its
constraint already point at `quotes_policy`, which did not move."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('commissions', '0002_sub_agency_shares_and_portal_reversals'),
        ('policies', '0006_policy_moved_from_quotes'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name='policycommission',
                    name='policy',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='commission_entries', to='policies.policy', verbose_name='poliçe'),
                ),
            ],
            database_operations=[],
        ),
    ]
