#!/usr/bin/env bash
# Install the Neutron of herd's Nova bed: its own venv with neutron from PyPI.
#
# Neutron 29 is the OpenStack release of the Nova bed's nova 34 (2026.2). It lives in its own
# venv under NEUTRON_BED_DIR (default .beds/neutron, gitignored): its pins shape neither herd's
# .venv nor the Nova bed's. Idempotent: a stamp file records what was installed.
set -euo pipefail
cd "$(dirname "$0")/../.."

NEUTRON_VERSION="${NEUTRON_VERSION:-29.0.0}"
# psycopg2-binary: its database is on the bed's PostgreSQL; gunicorn serves neutron-api
exec scripts/bed-venv.sh neutron "${NEUTRON_BED_DIR:-.beds/neutron}" \
  "neutron==$NEUTRON_VERSION" psycopg2-binary gunicorn
