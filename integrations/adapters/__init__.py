"""Importing this package registers every insurer adapter."""

from integrations.adapters import anka, bogazici, cinar, deniz  # noqa: F401
from integrations.adapters.registry import adapter_class, registered_codes  # noqa: F401
