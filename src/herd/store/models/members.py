"""The member revision of each cluster and the nodes each recent revision changed."""

from __future__ import annotations

from sqlalchemy import BigInteger, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from herd.store.models.base import ID, Base


class MemberRevisionRow(Base):
    """How many times a cluster's members have changed (see store/member_revisions.py).

    Bumped as the last statement of every transaction that writes the cluster's
    node rows, so a revision names a commit-ordered state of the members.
    """

    __tablename__ = "member_revisions"

    cluster_id: Mapped[str] = mapped_column(ID, primary_key=True)
    revision: Mapped[int] = mapped_column(BigInteger, default=0)
    #: changes up to this revision are no longer in member_changes
    horizon: Mapped[int] = mapped_column(BigInteger, default=0)


class MemberChangeRow(Base):
    """Nodes of a cluster whose rows changed in one revision, in the same way (kept for recent
    revisions): a revision logs one row per way, its ids packed in one text.

    Packed because a reader patching its members after 1% of 100,000 changed reads the
    revisions since its own in one short range, a row or two, not 1,000 rows to group.
    """

    __tablename__ = "member_changes"

    cluster_id: Mapped[str] = mapped_column(ID, primary_key=True)
    revision: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    #: 0, 1, ...: one part per way the revision changed nodes
    part: Mapped[int] = mapped_column(Integer, primary_key=True)
    #: ``row``: any member column may have changed; ``state``: only the status or health,
    #: to the values below (None: that one was not written)
    fields: Mapped[str] = mapped_column(String(8))
    status: Mapped[str | None] = mapped_column(String(36), nullable=True)
    health: Mapped[str | None] = mapped_column(String(36), nullable=True)
    #: how many node ids ``node_ids`` holds
    count: Mapped[int] = mapped_column(Integer)
    #: the nodes' ids, space-separated, in id order (``*``: every member)
    node_ids: Mapped[str] = mapped_column(Text)
