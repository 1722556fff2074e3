#!/usr/bin/env bash
# Install the Nova test bed: its own venv with Nova, Placement and Glance from PyPI.
#
# Nova's pins must not shape herd's .venv, so the bed lives in its own venv under
# NOVA_BED_DIR (default .beds/nova, gitignored). Idempotent: a stamp file records what was
# installed; re-running with the same versions does nothing.
set -euo pipefail
cd "$(dirname "$0")/../.."

NOVA_VERSION="${NOVA_VERSION:-34.0.0}"
PLACEMENT_VERSION="${PLACEMENT_VERSION:-16.0.0}"
GLANCE_VERSION="${GLANCE_VERSION:-33.0.0}"
# psycopg2-binary: Nova's and Placement's databases are on PostgreSQL (SQLAlchemy's default
# postgresql driver); gunicorn serves the WSGI apps (nova-api, placement, and no uwsgi here).
exec scripts/bed-venv.sh nova "${NOVA_BED_DIR:-.beds/nova}" \
  "nova==$NOVA_VERSION openstack-placement==$PLACEMENT_VERSION glance==$GLANCE_VERSION" \
  psycopg2-binary gunicorn
