"""The study's Prolific panel over the API, as on the dashboard: GET the Prolific study, places taken,
submissions by Prolific status, the submissions left to the researcher and the bonuses; POST an action
(publish, sync, review, reject, bonus_dry_run, bonus_pay), which the job worker runs (202): calls to Prolific
never run in a web request. Actions are the study owner's."""

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.exceptions import PermissionDenied
from rest_framework.response import Response
from rest_framework.views import APIView

from research.prolific_client import MIN_REJECTION_MESSAGE, REJECTION_CATEGORIES
from research.prolific_services import prolific_panel
from research.prolific_tasks import ACTIONS, prolific_action_task
from research.researcher_views import may_manage
from studies.selectors import visible_versions

BONUS_KINDS = ("honesty", "rationale")  # research.bonuses.KINDS, which imports the science (tested equal)


class ProlificActionSerializer(serializers.Serializer):
    action = serializers.ChoiceField(choices=ACTIONS)
    places = serializers.IntegerField(min_value=1, required=False, help_text="publish: participants wanted")
    reward = serializers.IntegerField(min_value=1, required=False, help_text="publish: reward in cents")
    minutes = serializers.IntegerField(min_value=1, required=False, help_text="publish: estimated minutes")
    draft = serializers.BooleanField(default=False, help_text="publish: create the draft only")
    kind = serializers.ChoiceField(choices=BONUS_KINDS, required=False, help_text="bonus_dry_run, bonus_pay")
    amount = serializers.FloatField(min_value=0.01, max_value=1000, required=False, help_text="bonus_dry_run")
    submission_id = serializers.CharField(max_length=64, required=False, help_text="reject")
    message = serializers.CharField(
        min_length=MIN_REJECTION_MESSAGE, required=False, help_text="reject: Prolific's message to the participant"
    )
    rejection_category = serializers.ChoiceField(choices=REJECTION_CATEGORIES, required=False, help_text="reject")

    NEEDS = {
        "publish": ("places", "reward", "minutes"),
        "reject": ("submission_id", "message", "rejection_category"),
        "bonus_dry_run": ("kind",),
        "bonus_pay": ("kind",),
    }

    def validate(self, attrs: dict) -> dict:
        missing = [f for f in self.NEEDS.get(attrs["action"], ()) if f not in attrs]
        if missing:
            raise serializers.ValidationError({f: f"{attrs['action']} needs {f}" for f in missing})
        return attrs

    def options(self) -> dict:
        """The keyword arguments of the action's service (``research.prolific_actions.run_action``)."""
        data = self.validated_data
        action = data["action"]
        if action == "publish":
            return {
                "places": data["places"],
                "reward_cents": data["reward"],
                "minutes": data["minutes"],
                "draft": data["draft"],
            }
        if action == "reject":
            return {
                "submission_id": data["submission_id"],
                "message": data["message"],
                "category": data["rejection_category"],
            }
        if action == "bonus_dry_run":
            return {"kind": data["kind"], "amount": data.get("amount")}
        if action == "bonus_pay":
            return {"kind": data["kind"]}
        return {}


def prolific_action_queue(user, slug: str, data) -> tuple[str, dict]:
    """Validate an action (the study owner's only) and queue it for the job worker; returns the action and
    the validation errors (empty when queued)."""
    versions = visible_versions(user, slug)
    if not may_manage(user, versions[0]):
        raise PermissionDenied("Only the study's owner can act on Prolific.")
    wanted = ProlificActionSerializer(data=data)
    if not wanted.is_valid():
        return str(data.get("action", "")), wanted.errors
    action = wanted.validated_data["action"]
    prolific_action_task.enqueue(slug, action, wanted.options())
    return action, {}


class ProlificPanel(APIView):
    """The study's Prolific panel (null before ``prolific_publish``); POST queues an action (202)."""

    @extend_schema(responses={200: dict})
    def get(self, request, slug: str):
        visible_versions(request.user, slug)
        return Response({"prolific": prolific_panel(slug)})

    @extend_schema(request=ProlificActionSerializer, responses={202: dict})
    def post(self, request, slug: str):
        action, errors = prolific_action_queue(request.user, slug, request.data)
        if errors:
            raise serializers.ValidationError(errors)
        return Response({"queued": action}, status=202)
