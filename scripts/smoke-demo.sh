#!/usr/bin/env bash
# Runs one demo (cloth|fluid|playground|solids) under Xvfb for a few seconds, saves a screenshot and checks that
# it exists and is not blank. Usage: scripts/smoke-demo.sh cloth [out.png]
set -euo pipefail
demo="$1"
out="${2:-${TMPDIR:-/tmp}/pbd2d-$demo.png}"
rm -f "$out"
# winit wants a runtime directory; a CI shell has none.
if [ -z "${XDG_RUNTIME_DIR:-}" ]; then
  XDG_RUNTIME_DIR=$(mktemp -d) && export XDG_RUNTIME_DIR
fi
export PBD2D_EXIT_AFTER_FRAMES="${PBD2D_EXIT_AFTER_FRAMES:-180}" PBD2D_SCREENSHOT="$out"
timeout 300 xvfb-run -a -s "-screen 0 1280x800x24" cargo run --example "$demo"
[ -s "$out" ] || { echo "smoke $demo: no screenshot at $out"; exit 1; }
# A blank window is one flat colour: require some variation and more than a few colours.
stddev=$(convert "$out" -colorspace Gray -format "%[fx:standard_deviation]" info:)
colours=$(convert "$out" -format "%k" info:)
echo "smoke $demo: $out, grey stddev $stddev, $colours colours"
awk -v s="$stddev" -v c="$colours" 'BEGIN { exit !(s > 0.02 && c > 16) }' || { echo "smoke $demo: screenshot is blank"; exit 1; }
