from django.urls import path

from evaluations import api, campaign_views, regrade_views, task_views, views

app_name = "evaluations"

urlpatterns = [
    path("", views.leaderboard, name="leaderboard"),
    path("heatmap/", views.heatmap, name="heatmap"),
    # /compare/ is the trajectory explorer's (two rollouts): two entries are compared under /compare/entries/.
    path("compare/entries/", views.compare, name="compare_entries"),
    path("charts/", views.leaderboard_charts, name="leaderboard_charts"),
    # Under /tasks/ beside the catalogue (tasks.urls), but the leaderboard's: it shows the results on the task.
    path("tasks/<str:version>/<str:name>/", task_views.task_detail, name="task_detail"),
    # A path: Harbor and litellm model names may keep an organisation ("Qwen/Qwen3-Coder").
    path("models/<path:name>/", views.model_detail, name="model_detail"),
    path("published/import/", views.import_results_upload, name="import_results"),
    path("api/", api.docs, name="api_docs"),
    path("api/v1/leaderboard/", api.leaderboard, name="api_leaderboard"),
    path("api/v1/leaderboard.csv", api.leaderboard, {"csv_url": True}, name="api_leaderboard_csv"),
    path("api/v1/heatmap/", api.heatmap, name="api_heatmap"),
    path("api/v1/heatmap.csv", api.heatmap, {"csv_url": True}, name="api_heatmap_csv"),
    path("api/v1/time-curves/", api.time_curves, name="api_time_curves"),
    path("api/v1/compare/", api.compare, name="api_compare"),
    path("api/v1/compare.csv", api.compare, {"csv_url": True}, name="api_compare_csv"),
    path("api/v1/time-curves.csv", api.time_curves, {"csv_url": True}, name="api_time_curves_csv"),
    path("api/v1/rollouts/", api.rollouts, name="api_rollouts"),
    path("api/v1/rollouts.csv", api.rollouts, {"csv_url": True}, name="api_rollouts_csv"),
    path("campaigns/", campaign_views.campaign_list, name="campaign_list"),
    path("campaigns/new/", campaign_views.campaign_new, name="campaign_new"),
    path("campaigns/<int:pk>/", campaign_views.campaign_detail, name="campaign_detail"),
    path("campaigns/<int:pk>/progress.json", campaign_views.campaign_progress_json, name="campaign_progress"),
    path("campaigns/<int:pk>/cancel/", campaign_views.campaign_cancel, name="campaign_cancel"),
    path("campaigns/rollouts/<int:pk>/cancel/", campaign_views.rollout_cancel, name="rollout_cancel"),
    path("regrade/rollouts/<int:pk>/", regrade_views.regrade_rollout, name="regrade_rollout"),
    path("regrade/campaigns/<int:pk>/", regrade_views.regrade_campaign, name="regrade_campaign"),
    path("regrade/tasks/<int:pk>/", regrade_views.regrade_task, name="regrade_task"),
]
