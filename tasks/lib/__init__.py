"""Small Django-free helpers that every app, and the pure packages, may use.

They live in `tasks`, the bottom layer (trajectories and evaluations import
it, it imports neither), whose package imports nothing when loaded. Not in
`autolab_site`: importing any module there first runs its `__init__`, which
starts the Celery app and with it django.conf, and
`trajectories.reading`/`trajectories.analysis` must stay free of Django.
"""
