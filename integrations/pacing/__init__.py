"""Pacing and budget: how fast calls go out (send rate per agency account), how many retries an
insurer gets (retry budget), and how long to wait between tries."""
