from django.contrib import admin
from django.urls import include, path

from outreach.webhooks import guarded_anymail_urls
from poolpatrol.health import health

admin.site.site_header = "Pool Patrol — vanpool audits"
admin.site.site_title = "Pool Patrol"
admin.site.index_title = "Audit records"

urlpatterns = [
    path("health", health, name="health"),
    path("admin/", admin.site.urls),
    # The email provider's inbound and tracking webhooks (anymail), refused
    # outside DEBUG until WEBHOOK_SECRET is set.
    path("anymail/", include(guarded_anymail_urls())),
]
