"""The REST API (Django REST framework): the quote desk for other front ends."""
