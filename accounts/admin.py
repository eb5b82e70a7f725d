from django.contrib import admin, messages
from django.contrib.auth import get_user_model
from django.contrib.auth.admin import UserAdmin

from accounts.models import ApiToken
from accounts.services import user_sessions_end

User = get_user_model()


@admin.action(description="Log out everywhere (end all their sessions, revoke their API tokens)")
def logout_everywhere(modeladmin, request, queryset):
    ended = [user_sessions_end(user=user) for user in queryset]
    sessions, tokens = sum(s for s, _ in ended), sum(t for _, t in ended)
    modeladmin.message_user(
        request,
        f"{sessions} session(s) of {len(ended)} user(s) ended, {tokens} API token(s) revoked.",
        messages.SUCCESS,
    )


class ResearcherUserAdmin(UserAdmin):
    actions = [*(UserAdmin.actions or ()), logout_everywhere]  # type: ignore[misc]  # a class attribute of the generic


if admin.site.is_registered(User):
    admin.site.unregister(User)
admin.site.register(User, ResearcherUserAdmin)


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    """See and revoke (delete) researchers' API tokens; keys are created by their owners only."""

    list_display = ["prefix", "name", "user", "created_at", "last_used_at"]
    list_filter = ["user"]
    readonly_fields = ["user", "name", "prefix", "key_hash", "created_at", "last_used_at"]

    def has_add_permission(self, request) -> bool:
        return False
