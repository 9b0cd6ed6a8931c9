"""The authorization server's routes, in django-oauth-toolkit's namespace (its views reverse their own names).

The metadata documents sit at the root, where RFC 8414 and RFC 9728 put them; the endpoints under /oauth/.
"""

from __future__ import annotations

from django.urls import path
from oauth2_provider import views as oauth_views

from tokens import oauth_views as ours

app_name = "oauth2_provider"

urlpatterns = [
    path(
        ".well-known/oauth-authorization-server",
        oauth_views.OAuthServerMetadataView.as_view(),
        name="oauth-server-metadata",
    ),
    path(
        ".well-known/oauth-protected-resource", ours.ProtectedResourceMetadata.as_view(), name="oauth-resource-metadata"
    ),
    path(
        ".well-known/oauth-protected-resource/<path:resource_path>",
        ours.ProtectedResourceMetadata.as_view(),
        name="oauth-resource-metadata-path",
    ),
    path("oauth/authorize/", ours.Authorize.as_view(), name="authorize"),
    path("oauth/token/", ours.Token.as_view(), name="token"),
    path("oauth/revoke/", oauth_views.RevokeTokenView.as_view(), name="revoke-token"),
    path("oauth/register/", ours.Register.as_view(), name="dcr-register"),
    path(
        "oauth/register/<str:client_id>/",
        oauth_views.DynamicClientRegistrationManagementView.as_view(),
        name="dcr-register-management",
    ),
]
