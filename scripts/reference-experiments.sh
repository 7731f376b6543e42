#!/bin/bash
# Run the experiment of every reference lab on this host and keep its results in docs/experiments/, from which
# scripts/reference_doc.py writes docs/reference-experiments.md and README's VM table. Needs root: each lab is
# deployed, then destroyed.
#   REPEAT, WARMUP, SECONDS_PER_RUN shorten the runs (defaults: 3 runs of 3 s after 1 warm-up run).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-.venv/bin/python}
OUT=docs/experiments
read -r -a LABS <<< "${LABS:-macvlan-vs-veth host-routed-bridges ovs-openflow vm-tap-vs-macvtap vhost-on-off vm-router}"
mkdir -p "$OUT"
for lab in "${LABS[@]}"; do
    file="topologies/$lab.vtopo"
    "$PYTHON" -m vtopo deploy "$file"
    trap '"$PYTHON" -m vtopo destroy "$file"' EXIT
    "$PYTHON" -m vtopo experiment "$file" --out "$OUT" --repeat "${REPEAT:-3}" --warmup "${WARMUP:-1}" \
        --seconds "${SECONDS_PER_RUN:-3}" --no-history || true
    "$PYTHON" -m vtopo check "$file" || true
    "$PYTHON" -m vtopo destroy "$file"
    trap - EXIT
done
"$PYTHON" scripts/reference_doc.py
