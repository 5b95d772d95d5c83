"""Settings split by environment: base (shared), local (developer and demo), production, test.

Everything read from the environment is read in `base`, so there is one place to look.
"""
