"""``/v1/profiles`` (the routes are those of api/routers/spec_resources.py)."""

from __future__ import annotations

from herd.api.routers.spec_resources import spec_router
from herd.api.services.profiles import PROFILES
from herd.api.view_models import ProfileView, ValidatedProfileView
from herd.api.views import profile_view

router = spec_router(PROFILES, profile_view, ProfileView, ValidatedProfileView)
