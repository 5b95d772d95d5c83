"""DRF permissions of the agencies app."""

from __future__ import annotations

from typing import Any

from rest_framework.permissions import BasePermission
from rest_framework.request import Request

from agencies.backends import agency_allows

AGENCY_INACTIVE_MESSAGE = "Acenteniz pasif durumda; işlem yapılamaz."


class AgencyIsActive(BasePermission):
    """A token keeps working after its agency is deactivated unless something refuses it per request:
    token authentication never asks the login backend (`agencies.backends`)."""

    message = AGENCY_INACTIVE_MESSAGE

    def has_permission(self, request: Request, view: Any) -> bool:
        return agency_allows(request.user)
