#!/usr/bin/env bash
# Run vtopo's test suite, as root: first make sure the Debian packages and the venv are there
# (scripts/setup.sh: quick when they are, and the guest image the VM tests boot), then pytest offscreen.
#
# Before the suite: the import layers and cycles (lint-imports, contracts in setup.cfg), the types (mypy) and
# copied code (pylint's duplicate-code check alone, configured in setup.cfg).
#
# The suite runs as two pytest processes at once: the privileged tests (marked `privileged`: they deploy labs and
# mostly wait on the kernel and the labs' daemons) print as they run, and beside them the unprivileged ones, which
# deploy nothing and take a core for minutes, then the static checks; their output follows, each whole. A failure
# of any fails the command. Arguments select within both halves (a test runs in one of them); arguments with their
# own -m run as one process.
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
    args=()  # setup.cfg leaves tests/benchmarks out
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

pytest_run() {
    local status=0
    "$ROOT/.venv/bin/python" -m pytest "$@" || status=$?
    if [[ $status -eq 5 ]]; then
        # pytest's "no tests collected" is not a failure of the code under test (a subset may hold no test of a half).
        echo "test: pytest collected no tests"
        status=0
    fi
    return "$status"
}

if [[ $MODE == bench ]]; then
    pytest_run "${args[@]}" "$@"
    exit
fi

# The unprivileged half and then the static checks (about a minute of a core), in a process group of their own: an
# interrupt of the run ends the group whole, and its logs go with it.
logs=$(mktemp -d)
beside=""
stop_beside() {
    if [[ -n $beside ]]; then
        kill -TERM -- "-$beside" 2>/dev/null || true
        wait "$beside" 2>/dev/null || true
    fi
    rm -rf "$logs"
}
trap stop_beside EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

split=1
for arg in "$@"; do
    if [[ $arg =~ ^-[A-Za-z]*m ]]; then
        split=0  # a selection by marks of its own: -m again would replace it, and each half would run it all
    fi
done
# vtopo's own temporary files (vtopo-*): what is in /tmp after the run that was not before it, both halves ended, is
# a leak of the suite's. The run's own lock (flock /tmp/vtopo-suite.lock) is not.
vtopo_in_tmp() {
    find "${TMPDIR:-/tmp}" -maxdepth 1 -name 'vtopo-*' ! -name vtopo-suite.lock | sort
}
in_tmp_before=$(vtopo_in_tmp)

set -m
(
    set +e
    if [[ $split -eq 1 ]]; then
        pytest_run "${args[@]}" -m "not privileged" "$@" > "$logs/unprivileged" 2>&1
        echo "$?" > "$logs/unprivileged.status"
    fi
    static_checks > "$logs/checks" 2>&1
    echo "$?" > "$logs/checks.status"
) < /dev/null &
beside=$!
set +m

status=0
if [[ $split -eq 1 ]]; then
    pytest_run "${args[@]}" -m privileged "$@" || status=$?
else
    pytest_run "${args[@]}" "$@" || status=$?
fi
if [[ $status -eq 2 ]]; then
    exit 130  # pytest was interrupted (Ctrl-C): so is what runs beside it
fi
wait "$beside" || true
if [[ $split -eq 1 ]]; then
    echo "test: the unprivileged tests, run beside the privileged ones"
    cat "$logs/unprivileged"
    if [[ $(cat "$logs/unprivileged.status") -ne 0 ]]; then
        echo "test: unprivileged tests failed (see above)"
        status=1
    fi
fi
left_in_tmp=$(comm -13 <(echo "$in_tmp_before") <(vtopo_in_tmp))
if [[ -n $left_in_tmp ]]; then
    echo "test: the tests left in ${TMPDIR:-/tmp} what they made there:" $left_in_tmp
    status=1
fi
cat "$logs/checks"
if [[ $(cat "$logs/checks.status") -ne 0 ]]; then
    echo "test: lint-imports, mypy or the copied-code check failed (see above)"
    exit 1
fi
exit "$status"
