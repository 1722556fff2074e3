#!/usr/bin/env bash
# Install the Neutron of herd's Nova bed: its own venv with neutron from PyPI.
#
# Neutron 29 is the OpenStack release of the Nova bed's nova 34 (2026.2). It lives in its own
# venv under NEUTRON_BED_DIR (default .beds/neutron, gitignored): its pins shape neither herd's
# .venv nor the Nova bed's. Idempotent: a stamp file records what was installed.
set -euo pipefail
cd "$(dirname "$0")/../.."

BED_DIR="${NEUTRON_BED_DIR:-.beds/neutron}"
PYTHON="${PYTHON:-python3}"
NEUTRON_VERSION="${NEUTRON_VERSION:-29.0.0}"
STAMP="$BED_DIR/.installed"
WANT="neutron==$NEUTRON_VERSION"

if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$WANT" ]; then
  echo "neutron bed: already installed in $BED_DIR ($WANT)"
  exit 0
fi

start=$(date +%s)
mkdir -p "$BED_DIR"
[ -x "$BED_DIR/venv/bin/python" ] || "$PYTHON" -m venv "$BED_DIR/venv"
"$BED_DIR/venv/bin/pip" install -q --upgrade pip 2>&1 | { grep -v "^WARNING: Location 'file:" || true; }
# psycopg2-binary: its database is on the bed's PostgreSQL; gunicorn serves neutron-api
"$BED_DIR/venv/bin/pip" install -q $WANT psycopg2-binary gunicorn 2>&1 \
  | { grep -v "^WARNING: Location 'file:" || true; }
echo "$WANT" >"$STAMP"
echo "neutron bed: installed in $BED_DIR in $(( $(date +%s) - start )) s"
