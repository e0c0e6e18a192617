"""/api/…: resources without trailing slashes, as the design names them.

A trailing slash is redirected (308, method and body kept) to the canonical
path; any other unknown path is a JSON 404 in the error shape.
"""

from django.contrib.auth.decorators import login_required
from django.urls import path, re_path
from rest_framework.routers import SimpleRouter

from api.cases import CASE_ID_RE, CaseEmailsView, CaseViewSet
from api.docs import RedocView, SchemaView, SwaggerView
from api.emails import ThreadViewSet
from api.employees import EMPLOYEE_ID_RE, EmployeeShiftsView, EmployeeViewSet
from api.errors import not_found
from api.index import ApiIndexView
from api.pending_actions import PendingActionViewSet
from api.vanpools import VANPOOL_ID_RE, VanpoolRidersView, VanpoolViewSet

router = SimpleRouter(trailing_slash=False)
router.register("vanpools", VanpoolViewSet, basename="api-vanpool")
router.register("employees", EmployeeViewSet, basename="api-employee")
router.register("cases", CaseViewSet, basename="api-case")
router.register("emails/threads", ThreadViewSet, basename="api-thread")
router.register("pending-actions", PendingActionViewSet, basename="api-pendingaction")

urlpatterns = [
    path("", ApiIndexView.as_view(), name="api-index"),
    *router.urls,
    re_path(
        rf"^vanpools/(?P<vanpool_id>{VANPOOL_ID_RE})/riders$",
        VanpoolRidersView.as_view(),
        name="api-vanpool-riders",
    ),
    re_path(
        rf"^employees/(?P<employee_id>{EMPLOYEE_ID_RE})/shifts$",
        EmployeeShiftsView.as_view(),
        name="api-employee-shifts",
    ),
    re_path(
        rf"^cases/(?P<case_id>{CASE_ID_RE})/emails$",
        CaseEmailsView.as_view(),
        name="api-case-emails",
    ),
    path("schema/", SchemaView.as_view(), name="api-schema"),
    # The docs pages are for people: not logged in → the login page.
    path("docs/", login_required(SwaggerView.as_view(url_name="api-schema")), name="api-docs"),
    path("redoc/", login_required(RedocView.as_view(url_name="api-schema")), name="api-redoc"),
    re_path(r"^(?P<unmatched>.*)$", not_found, name="api-not-found"),
]
