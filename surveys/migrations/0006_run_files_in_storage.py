from django.db import migrations, models


class Migration(migrations.Migration):
    """Run reports move from absolute local folders to Django's storage (addressed by run)."""

    dependencies = [("surveys", "0005_participant_resume")]

    operations = [
        migrations.RenameField("analysisrun", "out_dir", "files_prefix"),
        migrations.RenameField("auditrun", "out_dir", "files_prefix"),
        migrations.AlterField(
            "analysisrun",
            "files_prefix",
            models.CharField(max_length=500, help_text="Storage folder of the report files."),
        ),
        migrations.AlterField(
            "auditrun",
            "files_prefix",
            models.CharField(max_length=500, help_text="Storage folder of the report files."),
        ),
    ]
