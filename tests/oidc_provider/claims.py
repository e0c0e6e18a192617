"""The claims the test provider asserts: who the user is and their directory groups."""

from typing import Any

from oauth2_provider.oauth2_validators import OAuth2Validator


class DirectoryClaims(OAuth2Validator):
    # `groups` only with the `groups` scope, as Okta and Keycloak do it.
    oidc_claim_scope = {**OAuth2Validator.oidc_claim_scope, "groups": "groups"}

    def get_additional_claims(self, request: Any) -> dict[str, Any]:
        user = request.user
        return {
            "preferred_username": user.username,
            "given_name": user.first_name,
            "family_name": user.last_name,
            "name": user.get_full_name(),
            "email": user.email,
            "email_verified": True,
            "groups": sorted(user.groups.values_list("name", flat=True)),
        }
