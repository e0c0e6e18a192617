"""The coordinators' pages; the review queue is the landing page."""

from django.urls import path

from dashboard import case_views, employee_views, program_views, site_views, vanpool_views

urlpatterns = [
    path("", case_views.review_queue, name="review-queue"),
    path("favicon.ico", site_views.favicon, name="favicon"),
    path("queue/<int:pk>/", case_views.action_card, name="action-card"),
    path("queue/<int:pk>/decide/", case_views.decide, name="action-decide"),
    path("cases/", case_views.case_list, name="case-list"),
    path("cases/<str:case_id>/", case_views.case_detail, name="case-detail"),
    path("cases/<str:case_id>/ask/", case_views.case_ask, name="case-ask"),
    path("program/", program_views.program_page, name="program"),
    path("vanpools/", vanpool_views.vanpool_list, name="vanpool-list"),
    path("vanpools/<str:vanpool_id>/", vanpool_views.vanpool_detail, name="vanpool-detail"),
    path("employees/<str:employee_id>/", employee_views.employee_detail, name="employee-detail"),
]
