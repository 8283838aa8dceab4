"""Grading finished rollouts again with their task's current verifier: whether it can be (`regrading`,
Django-free), doing it (`regrade`) and Harbor's trial that does it (`trial`)."""
