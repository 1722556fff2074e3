"""Make Neutron's schema on PostgreSQL: ``python herd_bed_neutron_schema.py DB_URL CONF...``.

Neutron 29's migrations no longer run on PostgreSQL (2025.2's ``d553edeb540f`` issues MySQL's
``ALTER TABLE tags CONVERT TO CHARACTER SET``), and SQLite cannot ALTER constraints. So the
tables are made from Neutron's own models (``neutron.db.migration.models.head``, the metadata
Neutron's model/migration sync test compares the migrations with), and alembic is stamped at
the heads, as a database migrated to the end would be. One process: importing Neutron is
most of the time.
"""

from __future__ import annotations

import sys

import sqlalchemy as sa
from neutron.db.migration import cli
from neutron.db.migration.models import head


def main() -> None:
    url, confs = sys.argv[1], sys.argv[2:]
    engine = sa.create_engine(url)
    head.get_metadata().create_all(engine)
    engine.dispose()
    sys.argv = ["neutron-db-manage", *(a for c in confs for a in ("--config-file", c))]
    sys.argv += ["stamp", "heads"]
    cli.main()


if __name__ == "__main__":
    main()
