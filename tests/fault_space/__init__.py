"""Fault-space searches over what moves money (issuance now), run by `python -m tests.fault_space`.

The bounded run is part of the suite (`tests/fault_space/test_issuance_search.py`); see
docs/issuance-safety.md for what it covers and how many sequences the last long run explored.
"""
