"""/accounts/…: the parts of django-allauth that sign-in uses, and no more.

No sign-up, password reset, email management or account connections: staff
accounts are made by an auditor or by the identity provider. The names are
allauth's own, since its views and templates reverse them.
"""

from allauth.account import views as account_views
from allauth.socialaccount import views as social_views
from django.urls import include, path
from django.views.generic import RedirectView

from poolpatrol.signin import oidc

urlpatterns = [
    # allauth sends people to "account_login" (an expired sign-in, a failed one): ours.
    path(
        "login/",
        RedirectView.as_view(pattern_name="login", query_string=True),
        name="account_login",
    ),
    path("logout/", account_views.logout, name="account_logout"),
    path("inactive/", account_views.account_inactive, name="account_inactive"),
    path("reauthenticate/", account_views.reauthenticate, name="account_reauthenticate"),
    # Second factor: enrol an authenticator app, recovery codes, the code at sign-in.
    path("2fa/", include("allauth.mfa.urls")),
    # Single sign-on (poolpatrol/signin/oidc.py).
    path("oidc/<str:provider_id>/login/", oidc.login, name="openid_connect_login"),
    path("oidc/<str:provider_id>/login/callback/", oidc.callback, name="openid_connect_callback"),
    path("oidc/cancelled/", social_views.login_cancelled, name="socialaccount_login_cancelled"),
    path("oidc/error/", social_views.login_error, name="socialaccount_login_error"),
]
