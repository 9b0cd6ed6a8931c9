"""The message's place, named for every chat platform (Slack, Telegram, Discord, Teams), not Slack alone; every
row keeps its values (a rename), and a Teams conversation's id, longer than Slack's, fits."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("notify", "0006_audit_stream_cursor"),
    ]

    operations = [
        migrations.RenameField("delivery", "slack_channel_id", "posted_in"),
        migrations.RenameField("delivery", "slack_ts", "posted_id"),
        migrations.AlterField("delivery", "posted_in", models.CharField(blank=True, max_length=400)),
        migrations.AlterField("delivery", "posted_id", models.CharField(blank=True, max_length=200)),
    ]
