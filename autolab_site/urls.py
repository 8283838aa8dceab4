from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.http import HttpResponsePermanentRedirect
from django.shortcuts import render
from django.templatetags.static import static
from django.urls import include, path
from django.utils.text import Truncator


def favicon(request):
    """Browsers ask for /favicon.ico on pages that name no icon (the admin's): it was a 404 on every page.

    Resolved per request: the collected file's hashed name is known only once collectstatic ran.
    """
    return HttpResponsePermanentRedirect(static("img/favicon.svg"))


def not_found(request, exception=None):
    """The 404 page with its reason: an Http404's own message, cut (it may quote a value as typed), else the path.

    Django's page says the exception's class name when it has no message:
    "Resolver404" for every mistyped address.
    """
    message = exception.args[0] if exception is not None and exception.args else ""
    reason = Truncator(message).chars(200) if isinstance(message, str) else ""
    return render(request, "404.html", {"reason": reason, "request_path": request.path}, status=404)


handler404 = not_found

urlpatterns = [
    path("favicon.ico", favicon),
    # The site's own login takes any active account (a submitting team's too); the admin's takes staff only.
    path("login/", auth_views.LoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("admin/", admin.site.urls),
    path("tasks/", include("tasks.urls")),
    path("submissions/", include("submissions.urls")),
    path("", include("trajectories.urls")),
    path("", include("evaluations.urls")),
]
