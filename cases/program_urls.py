from django.urls import path

from cases import program_views

urlpatterns = [
    path("program/", program_views.program_page, name="program"),
]
