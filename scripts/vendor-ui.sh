#!/usr/bin/env bash
# Refresh the dashboard's vendored chart library from the npm registry (no CDN at run time).
# Usage: scripts/vendor-ui.sh [VERSION]   (default: the version recorded in VERSIONS)
set -euo pipefail
cd "$(dirname "$0")/.."
dest=src/herd/api/ui/static/vendor
version="${1:-$(sed -n 's/^uplot \([0-9.]*\).*/\1/p' "$dest/VERSIONS")}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
(cd "$work" && npm pack --silent "uplot@${version}" >/dev/null && tar xzf "uplot-${version}.tgz")
cp "$work/package/dist/uPlot.iife.min.js" "$dest/uPlot.iife.min.js"
cp "$work/package/dist/uPlot.min.css" "$dest/uPlot.min.css"
cp "$work/package/LICENSE" "$dest/LICENSE.uplot"
sha="$(sha256sum "$dest/uPlot.iife.min.js" | cut -d' ' -f1)"
cat > "$dest/VERSIONS" <<EOT
uplot ${version} (MIT, LICENSE.uplot) from the npm registry: dist/uPlot.iife.min.js, dist/uPlot.min.css
uPlot.iife.min.js sha256 ${sha}
refresh with: make ui-vendor (scripts/vendor-ui.sh [VERSION])
EOT
echo "vendored uplot ${version}"
