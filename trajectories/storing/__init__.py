"""Storing rollouts and their files: one trial per transaction, bulk imports, artifacts."""
