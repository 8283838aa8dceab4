from django.urls import path

from submissions import views

app_name = "submissions"

urlpatterns = [
    path("", views.submission_list, name="list"),
    path("new/", views.submission_new, name="new"),
    path("<int:pk>/", views.submission_detail, name="detail"),
    path("<int:pk>/regrade/", views.submission_regrade, name="regrade"),
    path("<int:pk>/verify/", views.submission_verify, name="verify"),
    path("<int:pk>/self-report/", views.submission_self_report, name="self_report"),
    path("<int:pk>/publish/", views.submission_publish, name="publish"),
    path("<int:pk>/reject/", views.submission_reject, name="reject"),
]
