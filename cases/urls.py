from django.urls import path

from cases import views

urlpatterns = [
    path("", views.review_queue, name="review-queue"),
    path("queue/<int:pk>/", views.action_card, name="action-card"),
    path("queue/<int:pk>/decide/", views.decide, name="action-decide"),
    path("cases/", views.case_list, name="case-list"),
    path("cases/<str:case_id>/", views.case_detail, name="case-detail"),
    path("cases/<str:case_id>/ask/", views.case_ask, name="case-ask"),
]
