"""Static files: hashed and compressed once collected, plain names before.

`make demo` and docker-compose run collectstatic, so pages name each file by
the hash of its content (`leaderboard.3f2a....js`) and WhiteNoise serves the
precompressed copies with far-future cache headers. A checkout where
collectstatic has not run (a developer's runserver) has no manifest: pages
then name files plainly and WhiteNoise serves them from the finders.
"""
from __future__ import annotations

from whitenoise.storage import CompressedManifestStaticFilesStorage


class StaticStorage(CompressedManifestStaticFilesStorage):
    manifest_strict = False

    def stored_name(self, name: str) -> str:
        # No manifest yet: the plain name, rather than a hash of a file that was never collected.
        if not self.hashed_files:
            return name
        return super().stored_name(name)
