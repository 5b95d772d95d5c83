"""Test settings: a real database (SQLite file per run, or DATABASE_URL), fast hashing."""

from .base import *  # noqa: F403

DEBUG = False
SECRET_KEY = "test-only-secret-key-not-for-production-use-0123456789"
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
