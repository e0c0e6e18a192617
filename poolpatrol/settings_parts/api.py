"""The JSON API (Django REST framework) and its schema (drf-spectacular)."""

from poolpatrol.env import env_int, env_rate

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        # Token first: an anonymous caller gets 401 with WWW-Authenticate: Token.
        "rest_framework.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["api.permissions.StaffModelPermissions"],
    # JSON in and out; people read the API through /api/docs/.
    "DEFAULT_PARSER_CLASSES": ["rest_framework.parsers.JSONParser"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_FILTER_BACKENDS": ["api.filters.FilterBackend"],
    "DEFAULT_PAGINATION_CLASS": "api.pagination.Pagination",
    "PAGE_SIZE": env_int("API_PAGE_SIZE", 50, minimum=1),
    "DEFAULT_SCHEMA_CLASS": "api.schema.AutoSchema",
    "EXCEPTION_HANDLER": "api.errors.exception_handler",
    # Per user (so per token: one token per user) and per address; 429 + Retry-After.
    "DEFAULT_THROTTLE_CLASSES": [
        "api.throttles.UserThrottle",
        "api.throttles.AnonThrottle",
    ],
    "DEFAULT_THROTTLE_RATES": {
        "user": env_rate("API_THROTTLE_USER", "1000/hour"),
        "anon": env_rate("API_THROTTLE_ANON", "60/hour"),
    },
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Pool Patrol API",
    "DESCRIPTION": "Vanpools, employees, audit cases, email threads and the review queue.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SERVE_PERMISSIONS": ["api.permissions.IsStaff"],
    "SCHEMA_PATH_PREFIX": "/api",
    "COMPONENT_SPLIT_REQUEST": True,
    "ENUM_NAME_OVERRIDES": {
        "VanpoolStatusEnum": "vanpools.models.Vanpool.Status",
        "EmployeeStatusEnum": "vanpools.models.Employee.Status",
        "RiderStatusEnum": "vanpools.models.Rider.Status",
        "CaseStatusEnum": "cases.models.Case.Status",
        "CaseOutcomeEnum": "cases.models.Case.Outcome",
        "CheckTypeEnum": "cases.models.Verification.CheckType",
        "PendingActionStatusEnum": "cases.models.PendingAction.Status",
        "MessageStatusEnum": "outreach.models.Message.Status",
    },
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
}
