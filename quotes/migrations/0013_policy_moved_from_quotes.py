"""The Policy model moved from the desk app (quotes) to policies; its table, `quotes_policy`,
stays where it is, so this changes Django's picture of the models only, never a row or a column."""

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('commissions', '0003_policy_moved_from_quotes'),
        ('documents', '0004_policy_moved_from_quotes'),
        ('policies', '0006_policy_moved_from_quotes'),
        ('quotes', '0012_policy_sold_by_policy_sub_agency_and_more'),
        ('sync', '0008_policy_moved_from_quotes'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.DeleteModel(
                    name='Policy',
                ),
            ],
            database_operations=[],
        ),
    ]
