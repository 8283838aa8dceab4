from django.contrib import admin
from django.http import HttpResponsePermanentRedirect
from django.templatetags.static import static
from django.urls import include, path


def favicon(request):
    """Browsers ask for /favicon.ico on pages that name no icon (the admin's): it was a 404 on every page.

    Resolved per request: the collected file's hashed name is known only once collectstatic ran.
    """
    return HttpResponsePermanentRedirect(static("img/favicon.svg"))


urlpatterns = [
    path("favicon.ico", favicon),
    path("admin/", admin.site.urls),
    path("tasks/", include("tasks.urls")),
    path("", include("trajectories.urls")),
    path("", include("evaluations.urls")),
]
