from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

from outreach.webhooks import guarded_anymail_urls
from poolpatrol.health import health

admin.site.site_header = "Pool Patrol — vanpool audits"
admin.site.site_title = "Pool Patrol"
admin.site.index_title = "Audit records"

urlpatterns = [
    path("health", health, name="health"),
    path("admin/", admin.site.urls),
    path("login/", auth_views.LoginView.as_view(redirect_authenticated_user=True), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    # The email provider's inbound and tracking webhooks (anymail), refused
    # outside DEBUG until WEBHOOK_SECRET is set.
    path("anymail/", include(guarded_anymail_urls())),
    path("api/", include("api.urls")),
    # The coordinators' dashboard; the review queue is the landing page.
    path("", include("dashboard.urls")),
]
