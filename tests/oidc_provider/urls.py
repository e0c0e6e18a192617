from django.contrib.auth import views as auth_views
from django.urls import include, path

from tests.oidc_provider import directory

urlpatterns = [
    path("login/", auth_views.LoginView.as_view(), name="login"),
    path("o/", include("oauth2_provider.urls", namespace="oauth2_provider")),
    path("directory/users/<str:username>", directory.user),
    path("directory/clients/<str:client_id>/redirect-uris", directory.redirect_uri),
]
