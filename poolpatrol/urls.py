from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

from outreach.webhooks import guarded_anymail_urls
from poolpatrol.health import health
from poolpatrol.signin.views import StaffLoginView, admin_login

admin.site.site_header = "Pool Patrol — vanpool audits"
admin.site.site_title = "Pool Patrol"
admin.site.index_title = "Audit records"
# The admin signs in on the same page as the dashboard: single sign-on, the
# second factor and LOCAL_LOGIN apply to both (poolpatrol/signin/views.py).
admin.site.login = admin_login  # type: ignore[method-assign]

urlpatterns = [
    path("health", health, name="health"),
    path("admin/", admin.site.urls),
    path("login/", StaffLoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    # Single sign-on and the second factor (django-allauth, poolpatrol/signin/urls.py).
    path("accounts/", include("poolpatrol.signin.urls")),
    # The email provider's inbound and tracking webhooks (anymail), refused
    # outside DEBUG until WEBHOOK_SECRET is set.
    path("anymail/", include(guarded_anymail_urls())),
    path("api/", include("api.urls")),
    # The coordinators' dashboard; the review queue is the landing page.
    path("", include("dashboard.urls")),
]
