"""A staticfiles finder that serves plotly.js from the installed plotly package.

The site never loads scripts from a CDN, and we do not want to commit a 4 MB
minified file either: the plotly Python package ships the exact build.
"""
from __future__ import annotations

from pathlib import Path

from django.contrib.staticfiles.finders import BaseFinder
from django.core.files.storage import FileSystemStorage

PLOTLY_STATIC_PATH = "vendor/plotly.min.js"


def plotly_js_path() -> Path:
    import plotly

    return Path(plotly.__file__).parent / "package_data" / "plotly.min.js"


class PlotlyFinder(BaseFinder):
    def check(self, **kwargs):
        return []

    def find(self, path, find_all=False, **kwargs):
        if path == PLOTLY_STATIC_PATH and plotly_js_path().exists():
            found = str(plotly_js_path())
            return [found] if find_all else found
        return [] if find_all else None

    def list(self, ignore_patterns):
        source = plotly_js_path()
        if source.exists():
            storage = FileSystemStorage(location=str(source.parent))
            storage.prefix = "vendor"
            yield source.name, storage
