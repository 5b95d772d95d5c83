"""The operator console: the health dashboard, `/metrics` and their pages.

It sits on top: it reads the attempt log (`integrations`) and the durable work of `quotes` and
`sync`, and nothing below imports it.
"""
