from django.urls import path

from vanpools import views

urlpatterns = [
    path("vanpools/", views.vanpool_list, name="vanpool-list"),
    path("vanpools/<str:vanpool_id>/", views.vanpool_detail, name="vanpool-detail"),
    path("employees/<str:employee_id>/", views.employee_detail, name="employee-detail"),
]
