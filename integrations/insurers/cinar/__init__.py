"""Çınar Sigorta: the adapter (`adapter.py`) and its answer samples for the fuzz (`answer_samples.py`)."""
