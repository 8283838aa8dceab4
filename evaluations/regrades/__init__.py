"""Grading finished rollouts again with their task's current verifier: whether it can be (`regrading`,
Django-free) and doing it (`regrade`)."""
