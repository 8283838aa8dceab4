"""Our own evaluations: campaigns, their preflight and estimates, the Celery dispatch, the runner of one
rollout as a Harbor trial, the reaper, and the lifecycle that owns their statuses. The sandboxes they run
in are `evaluations.sandbox`."""
