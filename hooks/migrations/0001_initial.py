# HookRun and HookRunDirectory moved here from lifecycle (issue 14). Their tables and rows
# stay where they are (lifecycle_hookrun, lifecycle_hookrundirectory): this migration only
# tells Django's model state that the models now belong to `hooks`, and moves their content
# types. lifecycle.0005 removes the old state.

import django.db.models.deletion
import django.utils.timezone
import uuid
from django.db import migrations, models

MODELS = ("hookrun", "hookrundirectory")


def move_content_types(apps, schema_editor):
    ContentType = apps.get_model("contenttypes", "ContentType")
    ContentType.objects.filter(app_label="lifecycle", model__in=MODELS).update(app_label="hooks")


def move_content_types_back(apps, schema_editor):
    ContentType = apps.get_model("contenttypes", "ContentType")
    ContentType.objects.filter(app_label="hooks", model__in=MODELS).update(app_label="lifecycle")


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ('lifecycle', '0004_hook_runs'),
        ('tokens', '0001_initial'),
        ('contenttypes', '0002_remove_content_type_name'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name='HookRun',
                    fields=[
                        ('id', models.UUIDField(default=uuid.uuid4, editable=False, primary_key=True, serialize=False)),
                        ('tool', models.CharField(db_index=True, max_length=128)),
                        ('plugin', models.CharField(max_length=64)),
                        ('hook', models.CharField(max_length=64)),
                        ('title', models.CharField(max_length=200)),
                        ('command', models.TextField(help_text='The command as configured when the run started.')),
                        ('target', models.CharField(help_text='The folder asked for, relative to the workspace.', max_length=1024)),
                        ('fail_fast', models.BooleanField(default=True)),
                        ('verbose', models.BooleanField(default=False)),
                        ('timeout_seconds', models.FloatField()),
                        ('caller_name', models.CharField(max_length=100)),
                        ('status', models.CharField(choices=[('running', 'Running'), ('passed', 'Passed'), ('failed', 'Failed'), ('timed-out', 'Timed out'), ('nothing-to-run', 'Nothing to run'), ('cancelled', 'Cancelled'), ('abandoned', 'Abandoned (server stopped)')], db_index=True, default='running', max_length=16)),
                        ('slot', models.PositiveSmallIntegerField(blank=True, editable=False, null=True)),
                        ('started_at', models.DateTimeField(db_index=True, default=django.utils.timezone.now)),
                        ('heartbeat_at', models.DateTimeField(default=django.utils.timezone.now)),
                        ('finished_at', models.DateTimeField(blank=True, null=True)),
                        ('caller', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, to='tokens.agenttoken')),
                    ],
                    options={
                        'ordering': ['-started_at'],
                        'db_table': 'lifecycle_hookrun',
                    },
                ),
                migrations.CreateModel(
                    name='HookRunDirectory',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('position', models.PositiveIntegerField()),
                        ('directory', models.CharField(help_text='Relative to the workspace.', max_length=1024)),
                        ('status', models.CharField(choices=[('waiting', 'Waiting'), ('running', 'Running'), ('passed', 'Passed'), ('failed', 'Failed'), ('timed-out', 'Timed out'), ('skipped', 'Not run (failFast)'), ('cancelled', 'Cancelled')], default='waiting', max_length=16)),
                        ('exit_code', models.IntegerField(blank=True, null=True)),
                        ('started_at', models.DateTimeField(blank=True, null=True)),
                        ('duration_seconds', models.FloatField(blank=True, null=True)),
                        ('output', models.TextField(blank=True)),
                        ('output_bytes', models.PositiveBigIntegerField(default=0, help_text='All the output the command wrote.')),
                        ('output_cut', models.PositiveBigIntegerField(default=0, help_text='Bytes cut from the middle to keep the limit.')),
                        ('run', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='directories', to='hooks.hookrun')),
                    ],
                    options={
                        'ordering': ['run', 'position'],
                        'db_table': 'lifecycle_hookrundirectory',
                    },
                ),
                migrations.AddConstraint(
                    model_name='hookrun',
                    constraint=models.UniqueConstraint(condition=models.Q(('slot__isnull', False)), fields=('tool', 'target', 'slot'), name='one_run_per_slot'),
                ),
                migrations.AddConstraint(
                    model_name='hookrundirectory',
                    constraint=models.UniqueConstraint(fields=('run', 'position'), name='one_row_per_run_position'),
                ),
            ],
            database_operations=[],
        ),
        migrations.RunPython(move_content_types, move_content_types_back),
    ]
