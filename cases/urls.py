from django.urls import path

from cases import views

urlpatterns = [
    path("", views.review_queue, name="review-queue"),
    path("cases/", views.case_list, name="case-list"),
    path("cases/<str:case_id>/", views.case_detail, name="case-detail"),
]
