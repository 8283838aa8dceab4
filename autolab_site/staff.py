"""The one staff check of the site's own views (the admin site keeps Django's).

One behaviour everywhere, pages, POST actions and JSON endpoints alike:
an anonymous visitor is sent to the login page (the site's, `LOGIN_URL`,
which takes any active account, with ?next=) because logging in may be all
they lack; someone logged in who
is not active staff gets 403, because logging in again would not help.
`tests/test_staff_views.py` lists the staff URLs and fails when `is_staff`
is read in Python anywhere but here (templates may still read it to show a
link).
"""
from __future__ import annotations

from collections.abc import Callable
from functools import wraps

from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse


def is_staff(user) -> bool:
    """Active staff. An inactive account is refused even if a session still names it."""
    return bool(user.is_authenticated and user.is_active and user.is_staff)


def staff_required(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Let active staff through to `view`; send anonymous visitors to log in; 403 for anyone else."""

    @wraps(view)
    def checked(request: HttpRequest, *args, **kwargs) -> HttpResponse:
        if not request.user.is_authenticated:
            return redirect_to_login(request.get_full_path())
        if not is_staff(request.user):
            raise PermissionDenied("Only staff can do this.")
        return view(request, *args, **kwargs)

    # Read by the test that enumerates the staff URLs (decorators built on functools.wraps keep it).
    checked.staff_required = True
    return checked
