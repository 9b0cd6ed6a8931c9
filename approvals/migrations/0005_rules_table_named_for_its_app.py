"""Issue 58: the rules' table takes this app's name (there is no app `claudecode` any more); every row stays."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("approvals", "0004_deciders_on_call")]

    operations = [migrations.AlterModelTable(name="approvalrule", table=None)]
