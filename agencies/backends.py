"""Logins and sessions refuse agents of a deactivated agency or sub-agency.

One backend carries the rule for every door: `authenticate()` (the desk login, the admin login
and the API token endpoint all call it) and `get_user()` (every request of a logged-in session).
So an agency deactivated mid-session turns its agents' next page into the login page, without
waiting for their sessions to expire. API tokens do not pass through a backend: the DRF
permission `agencies.permissions.AgencyIsActive` carries the same rule there.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend


def agency_allows(user: Any) -> bool:
    """False only for an agent whose agency, or sub-agency (tali acente), is deactivated; staff
    without an agency are not agents."""
    profile = getattr(user, "agent_profile", None)
    if profile is None:
        return True
    return profile.agency.is_active and (profile.sub_agency_id is None or profile.sub_agency.is_active)


class ActiveAgencyModelBackend(ModelBackend):
    def user_can_authenticate(self, user: Any) -> bool:
        return super().user_can_authenticate(user) and agency_allows(user)

    def get_user(self, user_id: Any) -> Any:
        # One query for the user, the profile and the agency: this runs on every request.
        user_model = get_user_model()
        try:
            user = user_model._default_manager.select_related("agent_profile__agency", "agent_profile__sub_agency").get(
                pk=user_id
            )
        except user_model.DoesNotExist:
            return None
        return user if self.user_can_authenticate(user) else None
