"""Why a rollout scored zero: the pure rules and their ORM side."""
