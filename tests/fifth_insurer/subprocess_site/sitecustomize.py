"""Registers the test-only insurer in a product process a test starts (qcluster, manage.py ...).

The test session imports `tests.fifth_insurer` itself (tests/conftest.py); a worker or command
it starts is a fresh interpreter that would know only the shipped insurers while the test
database holds the fifth one's accounts. `worker_env` (tests/conftest.py) puts this directory
and the repository on PYTHONPATH, and Python imports `sitecustomize` at start-up, so those
processes register it too. Nothing outside the tests' subprocess environment ever sees it.
"""

import tests.fifth_insurer  # noqa: F401
