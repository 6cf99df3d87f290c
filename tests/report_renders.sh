#!/usr/bin/env bash
# The HTML report renders in headless Chromium, offline, with no console message and no request, with its plots'
# elements in the rendered DOM; leaves report.png beside it. Skipped (exit 77) where Chromium is not installed
# (tools/setup --browser installs it; tools/test does).
# Usage: report_renders.sh CLUSTERSIM SCENARIO OUT_DIR
set -euo pipefail
cs=$1 scenario=$2 out=$3
if ! command -v chromium > /dev/null; then
  echo "chromium is not installed (tools/setup --browser): skipped"
  exit 77
fi
rm -rf "$out"
"$cs" run "$scenario" -o "$out" --report -q > /dev/null
html="$out/report.html"
# No network: every host resolves to nothing, so a fetched resource would log net::ERR_*.
browser=(chromium --headless --no-sandbox --disable-gpu --no-first-run --disable-background-networking
         --disable-component-update --disable-sync --host-resolver-rules="MAP * ~NOTFOUND"
         --enable-logging=stderr --v=0 --user-data-dir="$out/chromium-profile")
timeout 120 "${browser[@]}" --log-net-log="$out/netlog.json" --dump-dom "file://$html" > "$out/dom.html" \
  2> "$out/console.txt"
# Console messages (JavaScript errors included) and failed requests.
if grep -E ":CONSOLE|net::ERR_|Uncaught" "$out/console.txt"; then
  echo "report.html: the browser logged the lines above"
  exit 1
fi
# Requests the page made (the browser's own update and account checks aside).
if grep -o '"url":"[a-z]*://[^"]*"' "$out/netlog.json" | grep -v -E '://[^/"]*(google\.com|googleapis\.com|gvt1\.com)[/:"]'; then
  echo "report.html: the page requested the URLs above"
  exit 1
fi
for id in run ranks critical-path links communicators rank-bars critical-path-bar link-heatmap; do
  grep -q "id=\"$id\"" "$out/dom.html" || { echo "report.html: no element with id $id after rendering"; exit 1; }
done
segments=$(grep -o '<rect class="segment"' "$out/dom.html" | wc -l)
cells=$(grep -o '<rect class="cell"' "$out/dom.html" | wc -l)
((segments > 0 && cells > 0)) || { echo "report.html: $segments bar segments, $cells heatmap cells"; exit 1; }
timeout 120 "${browser[@]}" --screenshot="$out/report.png" --window-size=1200,2000 "file://$html" \
  > /dev/null 2>> "$out/console.txt"
test -s "$out/report.png"
echo "report.html renders: $segments bar segments, $cells heatmap cells; screenshot $out/report.png"
