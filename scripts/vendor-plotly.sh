#!/usr/bin/env bash
# Vendor plotly.js's partial "basic" bundle (scatter, bar and pie traces: all
# our charts draw) into static/vendor/, with its licence beside it. The site
# serves it from its own static files, never from a CDN.
#
#   scripts/vendor-plotly.sh            # the pinned version below
#   scripts/vendor-plotly.sh 4.2.0      # another version (then update PINNED and commit)
#
# Needs npm (it only downloads the package's tarball: `npm pack`, no install).
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGE=plotly.js-basic-dist-min
PINNED=4.1.1
VERSION=${1:-$PINNED}
DEST=static/vendor

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$work" && npm pack --silent "$PACKAGE@$VERSION" >/dev/null)
tar -xzf "$work/$PACKAGE-$VERSION.tgz" -C "$work"
grep -q "plotly.js (basic - minified) v$VERSION" "$work/package/plotly-basic.min.js" || {
  echo "$PACKAGE@$VERSION: plotly-basic.min.js does not name version $VERSION" >&2
  exit 1
}
mkdir -p "$DEST"
install -m 644 "$work/package/plotly-basic.min.js" "$DEST/plotly-basic.min.js"
install -m 644 "$work/package/LICENSE" "$DEST/plotly-basic.LICENSE.txt"
{
  echo "$PACKAGE $VERSION (MIT, see plotly-basic.LICENSE.txt), vendored by scripts/vendor-plotly.sh"
  (cd "$DEST" && sha256sum plotly-basic.min.js)
} > "$DEST/plotly-basic.VERSION.txt"
echo "vendored $PACKAGE $VERSION into $DEST ($(wc -c < "$DEST/plotly-basic.min.js") bytes)"
