"""The sign-in page, for the dashboard (/login/) and the admin (/admin/login/).

One page offers the identity provider's button (with OIDC_ISSUER) and the local
password form (unless LOCAL_LOGIN=false). A password is checked by Django's own
form, so django-axes counts and locks out exactly as before; the user it
returns is handed to django-allauth's login flow, which asks for the second
factor when the user has one before the session is made.
"""

from typing import Any, cast

from allauth.account.internal.flows.login import perform_login, record_authentication
from allauth.account.models import Login
from django.conf import settings
from django.contrib.auth import logout as auth_logout
from django.contrib.auth import views as auth_views
from django.contrib.auth.forms import AuthenticationForm
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse, reverse_lazy

from poolpatrol.signin.config import SSO_PROVIDER_ID


def sso_option() -> dict[str, str] | None:
    if settings.OIDC is None:
        return None
    return {
        "name": settings.OIDC.name,
        "url": reverse("openid_connect_login", kwargs={"provider_id": SSO_PROVIDER_ID}),
    }


class StaffLoginView(auth_views.LoginView):
    redirect_authenticated_user = True

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not settings.LOCAL_LOGIN:
            # Refused before any password is read: there is none to guess here.
            context = self.get_context_data(passwords_off=True)
            return self.render_to_response(context, status=403)
        return super().post(request, *args, **kwargs)

    def form_valid(self, form: AuthenticationForm) -> HttpResponse:
        user = form.get_user()
        if self.request.user.is_authenticated:
            # Signing in over someone else (the admin's page allows it): end their
            # session first, or logging in would empty the record made below.
            auth_logout(self.request)
        # The password just given also counts as allauth's re-authentication for
        # its next few minutes (ACCOUNT_REAUTHENTICATION_TIMEOUT): someone sent to
        # enrol an authenticator right after signing in is not asked for it twice.
        record_authentication(
            self.request, user, "password", username=user.get_username(), reauthenticated=True
        )
        return perform_login(self.request, Login(user=user, redirect_url=self.get_success_url()))

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        context["next"] = self.get_success_url()
        context["sso"] = sso_option()
        context["local_login"] = settings.LOCAL_LOGIN
        return context


class AdminLoginView(StaffLoginView):
    """The admin's login: the same page, landing on the admin's index."""

    redirect_authenticated_user = False
    next_page = reverse_lazy("admin:index")  # type: ignore[assignment]

    def get(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        user = request.user
        if user.is_authenticated and user.is_active and user.is_staff:
            return redirect(self.get_success_url())
        # Anyone else signed in is shown the page, to sign in as someone who may.
        return super().get(request, *args, **kwargs)


def admin_login(request: HttpRequest, extra_context: Any = None) -> HttpResponse:
    """Stands in for ``AdminSite.login`` (poolpatrol/urls.py)."""
    # A page or a redirect: an HttpResponse, as AdminSite.login's callers expect.
    return cast(HttpResponse, AdminLoginView.as_view()(request))
