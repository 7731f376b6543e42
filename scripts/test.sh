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
    bash "$ROOT/scripts/setup.sh" --bench --no-agent
else
    bash "$ROOT/scripts/setup.sh" --no-agent
fi
cd "$ROOT"
export QT_QPA_PLATFORM=offscreen

# The agent's tests run vtopo as test users, members of the group vtopo and not: they must reach the checkout and
# its venv. A checkout under a directory only its owner may enter (a home of mode 0700) fails them with "Permission
# denied" on the venv's python; say so now, naming the directory.
if ! failure=$(runuser -u nobody -- "$ROOT/.venv/bin/python" -c 'import vtopo, vtopo_kinds' 2>&1); then
    path=""
    for part in ${ROOT//\// } .venv bin; do
        path=$path/$part
        if ! runuser -u nobody -- test -x "$path"; then
            echo "test: other users cannot enter $path (mode $(stat -c %a "$path")), and the agent's tests run vtopo" \
                 "from this checkout as test users: let them in (chmod o+x $path), or clone vtopo where they can" \
                 "(/opt, /srv)" >&2
            exit 1
        fi
    done
    echo "test: as another user, this checkout's vtopo does not import (the agent's tests run it as test users):" \
         "${failure##*$'\n'}" >&2
    exit 1
fi
if [[ $MODE == bench ]]; then
    if [[ ! -d tests/benchmarks ]]; then
        echo "test: no tests/benchmarks yet"
        exit 0
    fi
    args=(tests/benchmarks -s)
else
    args=(--ignore=tests/benchmarks)
fi

static_checks() {
    local failed=0
    echo "test: import layers and cycles (lint-imports)"
    "$ROOT/.venv/bin/lint-imports" --config setup.cfg --no-logo --no-cache || failed=1
    echo "test: types (mypy)"
    "$ROOT/.venv/bin/python" -m mypy --cache-dir=/dev/null || failed=1
    echo "test: copied code (pylint duplicate-code)"
    "$ROOT/.venv/bin/python" -m pylint app/vtopo plugins/vtopo_kinds tests || failed=1
    return "$failed"
}

# The static checks take a core for about a minute: they run beside pytest, whose tests mostly wait on the kernel
# and the labs' daemons, and their output follows pytest's.
checks_log=""
if [[ $MODE == test ]]; then
    checks_log=$(mktemp)
    static_checks > "$checks_log" 2>&1 &
    checks_pid=$!
fi
status=0
"$ROOT/.venv/bin/python" -m pytest "${args[@]}" "$@" || status=$?
checks=0
if [[ -n $checks_log ]]; then
    wait "$checks_pid" || checks=1
    cat "$checks_log"
    rm -f "$checks_log"
fi
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
