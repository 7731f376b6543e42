#!/bin/bash
# Measure the two runs docs/measure.png compares, veth+bridge against macvlan in bridge mode (iperf3 TCP c1 -> c2),
# and keep each lab's history in docs/measure/; the screenshot test opens them (`make docs` renders the image).
# Needs root: each lab is deployed from a temporary copy, measured, then destroyed. SECONDS_PER_RUN (default 5).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-.venv/bin/python}
OUT=docs/measure
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$OUT"
for lab in bridge-veth macvlan-bridge; do
    cp "topologies/$lab.vtopo" "$WORK/"
    "$PYTHON" -m vtopo deploy "$WORK/$lab.vtopo"
    status=0
    rm -f "$WORK/$lab.measure.json"
    "$PYTHON" -m vtopo iperf "$lab" c1 c2 -t "${SECONDS_PER_RUN:-5}" -o "$WORK/$lab.measure.json" || status=$?
    "$PYTHON" -m vtopo destroy "$WORK/$lab.vtopo"
    [ "$status" -eq 0 ] || exit "$status"
    mv "$WORK/$lab.measure.json" "$OUT/"
done
