"""Who may call the API: authenticated staff with the model permission for the method."""

from typing import TYPE_CHECKING

from rest_framework.permissions import DjangoModelPermissions

if TYPE_CHECKING:  # DRF imports this module while rest_framework.views loads
    from rest_framework.request import Request
    from rest_framework.views import APIView


class StaffModelPermissions(DjangoModelPermissions):
    """Staff only, and reads need the model's ``view`` permission too.

    DRF's own class lets any authenticated user read; here nothing is readable
    without the same permission the admin would ask for.
    """

    perms_map = {
        **DjangoModelPermissions.perms_map,
        "GET": ["%(app_label)s.view_%(model_name)s"],
        "HEAD": ["%(app_label)s.view_%(model_name)s"],
        "OPTIONS": ["%(app_label)s.view_%(model_name)s"],
    }

    def has_permission(self, request: "Request", view: "APIView") -> bool:
        user = request.user
        if not (user and user.is_authenticated and user.is_staff):
            return False
        return super().has_permission(request, view)
