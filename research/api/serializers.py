from rest_framework import serializers

from studies.lifecycle import STATUS_CHOICES
from studies.models import Condition, Study, StudyStatusChange


class ConditionSerializer(serializers.ModelSerializer):
    participants = serializers.SerializerMethodField(help_text="Consented participants (active or completed).")

    class Meta:
        model = Condition
        fields = ["key", "label", "feature", "unit", "desirable", "cap", "participants"]

    def get_participants(self, condition: Condition) -> int:
        return condition.participants.filter(status__in=["active", "completed"]).count()


class StudySerializer(serializers.ModelSerializer):
    conditions = ConditionSerializer(many=True, read_only=True)
    owner = serializers.CharField(source="owner.username", default=None, read_only=True)

    class Meta:
        model = Study
        fields = ["slug", "version", "title", "owner", "created_at", "status", "conditions"]


class StudyDetailSerializer(StudySerializer):
    versions = serializers.SerializerMethodField()
    spec = serializers.JSONField(read_only=True)

    class Meta(StudySerializer.Meta):
        fields = [*StudySerializer.Meta.fields, "versions", "spec"]

    def get_versions(self, study: Study) -> list[int]:
        return list(Study.objects.filter(slug=study.slug).order_by("version").values_list("version", flat=True))


class StudyStatusRequestSerializer(serializers.Serializer):
    status = serializers.ChoiceField(choices=STATUS_CHOICES, help_text="The lifecycle state to put the study in.")


class StudyStatusChangeSerializer(serializers.ModelSerializer):
    changed_by = serializers.CharField(source="changed_by.username", default=None, read_only=True)

    class Meta:
        model = StudyStatusChange
        fields = ["old_status", "new_status", "changed_by", "changed_at", "reason"]


class StudyStatusSerializer(serializers.Serializer):
    """The study's lifecycle state and its latest changes, newest first."""

    status = serializers.ChoiceField(choices=STATUS_CHOICES)
    history = StudyStatusChangeSerializer(many=True)


class ParticipantRowSerializer(serializers.Serializer):
    """One row of the participants export table (every column in the docs' codebook reference)."""

    participant_id = serializers.CharField()
    study_version = serializers.IntegerField()
    condition = serializers.CharField(allow_blank=True)
    status = serializers.CharField()
    simulated = serializers.IntegerField()
    pilot = serializers.IntegerField()
    language = serializers.CharField()
    arrived_at = serializers.CharField()
    completed_at = serializers.CharField(allow_blank=True)
    duration_seconds = serializers.FloatField(allow_null=True)
    pages_answered = serializers.IntegerField()
    pages_total = serializers.IntegerField()
    attention_failed = serializers.IntegerField()
    excluded = serializers.IntegerField()
