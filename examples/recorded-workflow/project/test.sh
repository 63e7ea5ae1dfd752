#!/usr/bin/env bash
# test.sh: checks calc.sh. Prints one `ok` or `FAIL` line per check and exits 1 if any failed.
cd "$(dirname "$0")" || exit 2
# shellcheck source=calc.sh
source ./calc.sh

failures=0
check() { # check NAME EXPECTED ACTUAL
    if [ "$2" = "$3" ]; then
        echo "ok   $1"
    else
        echo "FAIL $1: expected $2, got $3"
        failures=$((failures + 1))
    fi
}

check "add 2 3" 5 "$(add 2 3)"
check "add -1 1" 0 "$(add -1 1)"
check "sub 7 4" 3 "$(sub 7 4)"
check "mul 6 7" 42 "$(mul 6 7)"

if [ "$failures" -gt 0 ]; then
    echo "$failures check(s) failed"
    exit 1
fi
echo "all checks passed"
