"""The attempt log: one row per exchange with an insurer, written by the recorder; its
per-minute roll-up and pruning."""
