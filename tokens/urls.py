from __future__ import annotations

from django.urls import path

from tokens import views

app_name = "tokens"

urlpatterns = [
    path("tokens/mine", views.create_for_me, name="create-for-me"),
    path("agents/", views.connected, name="connected"),
    path("agents/<int:pk>/disconnect", views.disconnect, name="disconnect"),
]
