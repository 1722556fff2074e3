"""The REST API, wire-compatible with the OpenStack clustering API v1 (Senlin)."""

from herd.api.app import create_app

__all__ = ["create_app"]
