"""The leaderboard's arithmetic: Avg@k, Best@k, Dominance, their bootstrap intervals, ranks, RE-Bench's time curves.

Plain scores in, figures out; no database, no HTTP, no Django (an
import-linter contract in pyproject.toml holds it so).
"""
