#!/usr/bin/env bash
# Run vtopo's test suite, as root: first make sure the Debian packages and the venv are there
# (scripts/setup.sh: quick when they are, and the guest image the VM tests boot), then pytest offscreen.
#
# Before the suite: the import layers and cycles (lint-imports, contracts in setup.cfg), the types (mypy) and
# copied code (pylint's duplicate-code check alone, configured in setup.cfg).
#
# Usage: scripts/test.sh [pytest args...]           the suite, without tests/benchmarks
#        scripts/test.sh --bench [pytest args...]   only tests/benchmarks, with their output (-s)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
MODE="test"
if [[ ${1:-} == --bench ]]; then
    MODE=bench
    shift
fi

if [[ $MODE == bench ]]; then
    bash "$ROOT/scripts/setup.sh" --bench
else
    bash "$ROOT/scripts/setup.sh"
fi
cd "$ROOT"
export QT_QPA_PLATFORM=offscreen
if [[ $MODE == bench ]]; then
    if [[ ! -d tests/benchmarks ]]; then
        echo "test: no tests/benchmarks yet"
        exit 0
    fi
    args=(tests/benchmarks -s)
else
    args=(--ignore=tests/benchmarks)
fi

checks=0
if [[ $MODE == test ]]; then
    echo "test: import layers and cycles (lint-imports)"
    "$ROOT/.venv/bin/lint-imports" --config setup.cfg --no-logo --no-cache || checks=1
    echo "test: types (mypy)"
    "$ROOT/.venv/bin/python" -m mypy --cache-dir=/dev/null || checks=1
    echo "test: copied code (pylint duplicate-code)"
    "$ROOT/.venv/bin/python" -m pylint app/vtopo plugins/vtopo_kinds tests || checks=1
fi
status=0
"$ROOT/.venv/bin/python" -m pytest "${args[@]}" "$@" || status=$?
if [[ $status -eq 5 ]]; then
    # pytest's "no tests collected" is not a failure of the code under test.
    echo "test: pytest collected no tests"
    status=0
fi
if [[ $checks -ne 0 ]]; then
    echo "test: lint-imports, mypy or the copied-code check failed (see above)"
    exit 1
fi
exit "$status"
