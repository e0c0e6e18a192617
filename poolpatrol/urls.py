from django.contrib import admin
from django.urls import path

from poolpatrol.health import health

admin.site.site_header = "Pool Patrol — vanpool audits"
admin.site.site_title = "Pool Patrol"
admin.site.index_title = "Audit records"

urlpatterns = [
    path("health", health, name="health"),
    path("admin/", admin.site.urls),
]
