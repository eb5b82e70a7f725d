"""A view-only admin for records of what participants saw and did."""

from django.contrib import admin
from django.http import HttpRequest


class ReadOnlyFieldsMixin(admin.ModelAdmin):
    """View only: every field shown read-only, no row added, changed or deleted through the admin (a
    participant leaves through withdrawal, which deletes their answers and frees their place)."""

    def get_readonly_fields(self, request: HttpRequest, obj=None) -> list[str]:
        return [f.name for f in self.model._meta.concrete_fields if f.name not in (self.exclude or ())]

    def has_add_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        return False
