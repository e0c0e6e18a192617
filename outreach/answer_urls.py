"""The riders' answer page: a signed link per rider per case, no login (``answer_views``)."""

from django.urls import path

from outreach.answer_views import answer_page

urlpatterns = [
    path("<str:case_id>/<str:token>/", answer_page, name="answer-page"),
]
