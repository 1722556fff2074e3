"""API tokens (the `token` auth mode)."""

from __future__ import annotations

from sqlalchemy import JSON, Float, String
from sqlalchemy.orm import Mapped, mapped_column

from herd.store.models.base import ID, Base


class TokenRow(Base):
    __tablename__ = "tokens"

    id: Mapped[str] = mapped_column(ID, primary_key=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    name: Mapped[str] = mapped_column(String(255), default="")
    project: Mapped[str] = mapped_column(String(64))
    role: Mapped[str] = mapped_column(String(16))
    created_at: Mapped[float] = mapped_column(Float)
    expires_at: Mapped[float | None] = mapped_column(Float, nullable=True)
    #: the regions an agent token may read (``placement.region_name``); None: every region
    regions: Mapped[list[str] | None] = mapped_column(JSON, nullable=True)
