#!/usr/bin/env bash
# Runs one demo (cloth|fluid|playground|solids|matter) under Xvfb for a few seconds, saves a screenshot and
# checks that it exists and is not blank, that no error was logged, and, where the demo draws
# water, that the water's area in the screenshot is within 20 % of the area its particles cover
# at rest ((2r)² each, the demo's `water_area_px` log line). Usage: scripts/smoke-demo.sh cloth [out.png]
set -euo pipefail
demo="$1"
out="${2:-${TMPDIR:-/tmp}/pbd2d-$demo.png}"
log="${out%.png}.log"
rm -f "$out" "$log"
# winit wants a runtime directory; a CI shell has none.
if [ -z "${XDG_RUNTIME_DIR:-}" ]; then
  XDG_RUNTIME_DIR=$(mktemp -d) && export XDG_RUNTIME_DIR
fi
export PBD2D_EXIT_AFTER_FRAMES="${PBD2D_EXIT_AFTER_FRAMES:-180}" PBD2D_SCREENSHOT="$out"
timeout 300 xvfb-run -a -s "-screen 0 1280x800x24" cargo run --example "$demo" 2>&1 | tee "$log"
[ -s "$out" ] || { echo "smoke $demo: no screenshot at $out"; exit 1; }
# Nothing may log an error (Bevy reports what it cannot draw that way, once or every frame).
if grep -q "ERROR" "$log"; then
  echo "smoke $demo: errors were logged:"; grep "ERROR" "$log" | sort | uniq -c | sort -rn | head -5; exit 1
fi
# A blank window is one flat colour: require some variation and more than a few colours.
stddev=$(convert "$out" -colorspace Gray -format "%[fx:standard_deviation]" info:)
colours=$(convert "$out" -format "%k" info:)
echo "smoke $demo: $out, grey stddev $stddev, $colours colours"
awk -v s="$stddev" -v c="$colours" 'BEGIN { exit !(s > 0.02 && c > 16) }' || { echo "smoke $demo: screenshot is blank"; exit 1; }
# The water: blue pixels (HSL hue 180°–259°, saturation above 0.25; the demos draw nothing
# else blue) against the particles' area at rest.
expected=$(grep -o "water_area_px=[0-9]*" "$log" | tail -n 1 | cut -d= -f2 || true)
case "$demo" in
  fluid|playground|matter)
    if [ -z "$expected" ] && [ "${PBD2D_LOOK:-game}" != reference ]; then
      echo "smoke $demo: no water_area_px line: the fluid surface drew no particles"; exit 1
    fi ;;
esac
if [ -n "$expected" ]; then
  water=$(convert "$out" -colorspace HSL -fx "(u.r>0.5&&u.r<0.72&&u.g>0.25)?1:0" -format "%[fx:round(mean*w*h)]" info:)
  echo "smoke $demo: water $water px, particles at rest $expected px"
  awk -v w="$water" -v e="$expected" 'BEGIN { exit !(e > 0 && w > 0.8 * e && w < 1.2 * e) }' \
    || { echo "smoke $demo: the water's area is not within 20 % of the particles'"; exit 1; }
fi
