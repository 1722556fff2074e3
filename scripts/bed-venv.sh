#!/usr/bin/env bash
# Install a test bed's pinned packages in its own venv: the shared part of the bed installers
# (scripts/nova-bed/install.sh, scripts/neutron-bed/install.sh).
#
# Usage: scripts/bed-venv.sh NAME BED_DIR "PINS" [MORE PACKAGES...]
# Idempotent: BED_DIR/.installed records the PINS installed; the same PINS again do nothing.
# PYTHON (default python3) makes the venv. pip's notes about this machine's missing local
# index directories are left out of the output.
set -euo pipefail

NAME="$1" BED_DIR="$2" WANT="$3"
shift 3
PYTHON="${PYTHON:-python3}"
STAMP="$BED_DIR/.installed"

if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$WANT" ]; then
  echo "$NAME bed: already installed in $BED_DIR ($WANT)"
  exit 0
fi

quiet() { grep -v "^WARNING: Location 'file:" || true; }
start=$(date +%s)
mkdir -p "$BED_DIR"
[ -x "$BED_DIR/venv/bin/python" ] || "$PYTHON" -m venv "$BED_DIR/venv"
"$BED_DIR/venv/bin/pip" install -q --upgrade pip 2>&1 | quiet
# shellcheck disable=SC2086  # PINS is a list of requirement specifiers
"$BED_DIR/venv/bin/pip" install -q $WANT "$@" 2>&1 | quiet
echo "$WANT" >"$STAMP"
echo "$NAME bed: installed in $BED_DIR in $(( $(date +%s) - start )) s"
