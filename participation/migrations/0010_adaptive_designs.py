from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("participation", "0009_adaptive_assignment")]

    operations = [
        migrations.RenameField("adaptivefit", "subjects", "parameters"),
        migrations.RenameField("adaptivefit", "strength", "estimate"),
        migrations.AlterField(
            model_name="adaptivefit",
            name="parameters",
            field=models.JSONField(
                help_text="The parameters' names (choose: subject ids; metric: scaled feature columns), in the "
                "order of estimate and covariance."
            ),
        ),
        migrations.AlterField(
            model_name="adaptivefit",
            name="estimate",
            field=models.JSONField(
                help_text="The parameters' estimates (choose: strengths on the log-odds scale, centred on their "
                "mean; metric: the weights M_kk)."
            ),
        ),
        migrations.AlterField(
            model_name="adaptivefit",
            name="covariance",
            field=models.JSONField(help_text="The covariance matrix of the estimates (a list of rows)."),
        ),
        migrations.AddField(
            model_name="adaptivefit",
            name="vectors",
            field=models.JSONField(
                blank=True, default=dict, help_text="Metric designs: subject id -> scaled feature vector (choose: empty)."
            ),
        ),
    ]
