"""Analysis of a rollout's steps: kinds, commands, edits, metrics, curve (no Django)."""
