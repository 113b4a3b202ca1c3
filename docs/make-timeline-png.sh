#!/usr/bin/env bash
# Regenerates docs/timeline-torch-buggy.png, the README's picture of the
# seed's buggy pipeline: replays the bundled trace with timeline=DIR and
# converts the finding's SVG with rsvg-convert (Debian: librsvg2-bin).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
xsc=${XSC:-$root/build/bin/xstream-check}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
# Exit status 66: the trace has a finding, which is the point.
"$xsc" replay --timeline="$dir" "$root/examples/traces/torch_buggy.jsonl" > /dev/null || [ $? -eq 66 ]
rsvg-convert "$dir/finding-1.svg" -o "$root/docs/timeline-torch-buggy.png"
