"""Where trials run: the backend registry (backends.py) and our Harbor environments.

- containers.py: Harbor's Docker and Podman environments, offline and link-safe;
- bubblewrap.py (+ dockerfile.py): the fallback sandbox on a host without a container engine;
- staging.py: the sandbox's /logs kept out of the trial folder, for every backend.
"""
