from django.contrib import admin, messages
from django.contrib.auth import get_user_model
from django.contrib.auth.admin import UserAdmin

from accounts.services import user_sessions_end

User = get_user_model()


@admin.action(description="Log out everywhere (end all their sessions)")
def logout_everywhere(modeladmin, request, queryset):
    total = sum(user_sessions_end(user=user) for user in queryset)
    modeladmin.message_user(request, f"{total} session(s) of {queryset.count()} user(s) ended.", messages.SUCCESS)


class ResearcherUserAdmin(UserAdmin):
    actions = [*UserAdmin.actions, logout_everywhere]


if admin.site.is_registered(User):
    admin.site.unregister(User)
admin.site.register(User, ResearcherUserAdmin)
