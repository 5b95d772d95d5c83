"""The agent's quote desk: thin views over the quote and issuance services.

Every view needs a login and reads through the agency-scoped selectors, so another agency's
id is simply "not found" (404). The insurer calls never run here: creating a request only
stores it and queues the work; the results page holds a stream (server-sent events,
quotes/live.py) that pushes the table as answers land, and polls the fragment (htmx) only when
the stream is not open.
"""
