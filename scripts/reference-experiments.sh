#!/bin/bash
# Run the experiment of every reference lab on this host and keep its results in docs/experiments/, from which
# scripts/reference_doc.py writes docs/reference-experiments.md and README's VM table. Needs root: each lab is
# deployed afresh for each round, then destroyed.
#   ROUNDS, REPEAT, WARMUP, SECONDS_PER_RUN shorten the runs (defaults: 3 rounds of 3 runs of 3 s after 1 warm-up).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-.venv/bin/python}
OUT=docs/experiments
read -r -a LABS <<< "${LABS:-macvlan-vs-veth host-routed-bridges ovs-openflow vm-tap-vs-macvtap vhost-on-off vm-router ospf-reconvergence}"
mkdir -p "$OUT"
for lab in "${LABS[@]}"; do
    "$PYTHON" -m vtopo experiment "topologies/$lab.vtopo" --out "$OUT" --rounds "${ROUNDS:-3}" \
        --repeat "${REPEAT:-3}" --warmup "${WARMUP:-1}" --seconds "${SECONDS_PER_RUN:-3}" --no-history || true
done
"$PYTHON" scripts/reference_doc.py
