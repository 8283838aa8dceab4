from django.urls import path

from trajectories import artifact_views, failure_views, job_views, judge_views, tab_views, upload_views, views

app_name = "trajectories"

urlpatterns = [
    path("rollouts/", views.rollout_list, name="rollout_list"),
    path("rollouts/upload/", upload_views.upload, name="upload"),
    path("rollouts/upload/<int:pk>/", upload_views.upload_job, name="upload_job"),
    path("rollouts/<int:pk>/", views.rollout_detail, name="rollout_detail"),
    path("rollouts/<int:pk>/steps/", views.step_fragment, name="step_fragment"),
    path("rollouts/<int:pk>/steps/<int:step_id>/observations/", views.step_observation, name="step_observation"),
    path(
        "rollouts/<int:pk>/steps/<int:step_id>/observations/<int:position>.txt",
        views.observation_text,
        name="observation_text",
    ),
    path("rollouts/<int:pk>/subagents/<int:sub_pk>/", views.subagent_detail, name="subagent_detail"),
    path("rollouts/<int:pk>/live.json", views.rollout_live, name="rollout_live"),
    path("rollouts/<int:pk>/curve.json", views.rollout_curve, name="rollout_curve"),
    path("rollouts/<int:pk>/files/<path:path>", artifact_views.trial_file, name="trial_file"),
    path("rollouts/<int:pk>/tabs/<str:tab>/", tab_views.trial_tab, name="trial_tab"),
    path("rollouts/<int:pk>/view/<path:path>", tab_views.artifact_view, name="artifact_view"),
    path("rollouts/<int:pk>/search/", views.rollout_search, name="rollout_search"),
    path("jobs/<path:job_id>/", job_views.job_detail, name="job_detail"),
    path("search/", views.search_view, name="search"),
    path("compare/", views.compare, name="compare"),
    path("failures/", failure_views.failures, name="failures"),
    path("failures/export.csv", failure_views.export_csv, name="failures_export_csv"),
    path("failures/export.json", failure_views.export_json, name="failures_export_json"),
    path("rollouts/<int:pk>/label/", failure_views.failure_label, name="failure_label"),
    path("failures/analyze/", judge_views.analyze, name="analyze"),
]
