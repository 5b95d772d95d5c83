"""The policy foreign key follows the Policy model into the policies app; the column and its
constraint already point at `quotes_policy`, which did not move."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('documents', '0003_turkish_choice_labels'),
        ('policies', '0006_policy_moved_from_quotes'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name='policydocument',
                    name='policy',
                    field=models.OneToOneField(on_delete=django.db.models.deletion.PROTECT, related_name='document', to='policies.policy', verbose_name='poliçe'),
                ),
            ],
            database_operations=[],
        ),
    ]
