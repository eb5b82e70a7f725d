"""The researcher's API tokens page: create a token (its key shown once), see and revoke tokens."""

from django import forms
from django.contrib.auth import authenticate
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from accounts.models import ApiToken
from accounts.services import TokenLimitReached, api_token_create, api_token_revoke


class TokenCreateForm(forms.Form):
    """A token's name, and the researcher's password: a borrowed session alone cannot mint a key.
    The password is checked through ``authenticate`` so django-axes counts wrong ones."""

    name = forms.CharField(max_length=100, required=False, label="What it is for")
    password = forms.CharField(widget=forms.PasswordInput, label="Your password", strip=False)

    def __init__(self, *args, request: HttpRequest, **kwargs):
        super().__init__(*args, **kwargs)
        self.request = request

    def clean_password(self) -> str:
        password = self.cleaned_data["password"]
        user = self.request.user
        if authenticate(self.request, username=user.get_username(), password=password) != user:
            raise forms.ValidationError("This is not your password.")
        return password


@login_required
@require_http_methods(["GET", "POST"])
def api_tokens(request: HttpRequest) -> HttpResponse:
    """GET lists the researcher's tokens; POST ``name`` and ``password`` creates one and shows its
    key on this one response (never stored, never in a redirect); POST ``revoke`` (a token id)
    revokes one of theirs."""
    form, new_key = TokenCreateForm(request=request), None
    if request.method == "POST":
        if "revoke" in request.POST:
            try:
                token_id = int(request.POST["revoke"])
            except ValueError:
                return HttpResponseBadRequest("revoke: not a token id")
            api_token_revoke(user=request.user, token_id=token_id)
            return redirect("api-tokens")
        form = TokenCreateForm(request.POST, request=request)
        if form.is_valid():
            try:
                _, new_key = api_token_create(user=request.user, name=form.cleaned_data["name"])
                form = TokenCreateForm(request=request)
            except TokenLimitReached as exc:
                form.add_error(None, str(exc))
    tokens = ApiToken.objects.filter(user=request.user)  # type: ignore[misc]  # login_required: never anonymous
    api_root = request.build_absolute_uri("/api/")
    return render(
        request, "accounts/api_tokens.html", {"form": form, "new_key": new_key, "tokens": tokens, "api_root": api_root}
    )
