"""Who may call the API: authenticated staff with the model permissions for what they do."""

from typing import TYPE_CHECKING

from rest_framework.permissions import DjangoModelPermissions

if TYPE_CHECKING:  # DRF imports this module while rest_framework.views loads
    from rest_framework.request import Request
    from rest_framework.views import APIView


class StaffModelPermissions(DjangoModelPermissions):
    """Staff only, and reads need the model's ``view`` permission too.

    DRF's own class lets any authenticated user read; here nothing is readable
    without the same permission the admin would ask for. A view may name the
    permissions an extra action needs in ``action_permissions`` (an audit is a
    POST on a vanpool but needs ``cases.add_case``, not ``add_vanpool``).
    Anonymous callers get 401, logged-in callers without the permission 403.
    """

    perms_map = {
        **DjangoModelPermissions.perms_map,
        "GET": ["%(app_label)s.view_%(model_name)s"],
        "HEAD": ["%(app_label)s.view_%(model_name)s"],
        "OPTIONS": ["%(app_label)s.view_%(model_name)s"],
    }

    def has_permission(self, request: "Request", view: "APIView") -> bool:
        user = request.user
        if not (user and user.is_authenticated and user.is_active and user.is_staff):
            return False
        needed = getattr(view, "action_permissions", {}).get(getattr(view, "action", None))
        if needed is not None:
            return user.has_perms(needed)
        return super().has_permission(request, view)


class IsStaff(StaffModelPermissions):
    """For views without a model (the schema and its docs): staff only."""

    def has_permission(self, request: "Request", view: "APIView") -> bool:
        user = request.user
        return bool(user and user.is_authenticated and user.is_active and user.is_staff)
