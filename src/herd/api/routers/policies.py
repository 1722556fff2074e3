"""``/v1/policies`` (the routes are those of api/routers/spec_resources.py)."""

from __future__ import annotations

from herd.api.routers.spec_resources import spec_router
from herd.api.services.policies import POLICIES
from herd.api.view_models import PolicyView, ValidatedPolicyView
from herd.api.views import policy_view

router = spec_router(POLICIES, policy_view, PolicyView, ValidatedPolicyView)
