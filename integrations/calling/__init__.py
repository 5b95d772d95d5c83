"""Calling insurers: the channel every request goes through, the retry engine, and the entry
point every caller uses."""
