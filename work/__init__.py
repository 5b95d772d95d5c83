"""Durable work: the record every background job extends (issuances, sync items, policy
documents), its state machine and its guarded transitions."""
