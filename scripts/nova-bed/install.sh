#!/usr/bin/env bash
# Install the Nova test bed: its own venv with Nova, Placement and Glance from PyPI.
#
# Nova's pins must not shape herd's .venv, so the bed lives in its own venv under
# NOVA_BED_DIR (default .beds/nova, gitignored). Idempotent: a stamp file records what was
# installed; re-running with the same versions does nothing.
set -euo pipefail
cd "$(dirname "$0")/../.."

BED_DIR="${NOVA_BED_DIR:-.beds/nova}"
PYTHON="${PYTHON:-python3}"
NOVA_VERSION="${NOVA_VERSION:-34.0.0}"
PLACEMENT_VERSION="${PLACEMENT_VERSION:-16.0.0}"
GLANCE_VERSION="${GLANCE_VERSION:-33.0.0}"
STAMP="$BED_DIR/.installed"
WANT="nova==$NOVA_VERSION openstack-placement==$PLACEMENT_VERSION glance==$GLANCE_VERSION"

if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$WANT" ]; then
  echo "nova bed: already installed in $BED_DIR ($WANT)"
  exit 0
fi

start=$(date +%s)
mkdir -p "$BED_DIR"
[ -x "$BED_DIR/venv/bin/python" ] || "$PYTHON" -m venv "$BED_DIR/venv"
"$BED_DIR/venv/bin/pip" install -q --upgrade pip 2>&1 | { grep -v "^WARNING: Location 'file:" || true; }
# psycopg2-binary: Nova's and Placement's databases are on PostgreSQL (SQLAlchemy's default
# postgresql driver); gunicorn serves the WSGI apps (nova-api, placement, and no uwsgi here).
# (pip's notes about this machine's missing local index directories are left out)
"$BED_DIR/venv/bin/pip" install -q $WANT psycopg2-binary gunicorn 2>&1 \
  | { grep -v "^WARNING: Location 'file:" || true; }
echo "$WANT" >"$STAMP"
echo "nova bed: installed in $BED_DIR in $(( $(date +%s) - start )) s"
