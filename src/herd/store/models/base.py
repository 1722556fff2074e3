"""The declarative base and the columns every table family shares.

Times are stored as epoch seconds (floats): they compare and sort the same on
SQLite and PostgreSQL, and the API formats them. JSON columns hold the free-form
maps Senlin exposes (metadata, data, spec, inputs, outputs).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import JSON, Float, String
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

ID = String(36)


class Base(DeclarativeBase):
    type_annotation_map = {dict[str, Any]: JSON, list[Any]: JSON}


class OwnedMixin:
    """Columns every user-visible resource has (Senlin's ownership triple)."""

    user: Mapped[str] = mapped_column(String(64), default="")
    project: Mapped[str] = mapped_column(String(64), index=True)
    domain: Mapped[str] = mapped_column(String(64), default="")
    created_at: Mapped[float | None] = mapped_column(Float, nullable=True)
    updated_at: Mapped[float | None] = mapped_column(Float, nullable=True)
