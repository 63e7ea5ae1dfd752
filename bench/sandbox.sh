#!/usr/bin/env bash
# The Bash sandbox's added cost per command (release build): `bash -c true` spawned directly
# vs through the sandbox helper (`skiff __sandbox … -- bash -c true`, what the Bash tool runs
# when the sandbox is on), median and 90th percentile of RUNS spawns each (200 by default).
# Figures only, no assertions. Without Landlock (or seccomp) in the kernel the confined rows
# fail and say so.
#
#   ./bench/sandbox.sh
#   RUNS=500 ./bench/sandbox.sh
set -euo pipefail
cd "$(dirname "$0")/.."

RUNS=${RUNS:-200}
cargo build --release --locked -q -p skiff-cli --bin skiff
skiff=$PWD/target/release/skiff
shell=$(command -v bash)
ws=$(mktemp -d)
trap 'rm -rf "$ws"' EXIT
cd "$ws"

# Microseconds since the epoch (bash 5's EPOCHREALTIME, whatever the locale's decimal mark).
now() { local t=$EPOCHREALTIME; echo "${t//[!0-9]/}"; }

# measure LABEL CMD...: prints "LABEL median p90" in microseconds.
measure() {
    local label=$1
    shift
    if ! "$@" >/dev/null 2>&1; then
        printf '%-44s failed: %s\n' "$label" "$("$@" 2>&1 | tail -1)" >&2
        return
    fi
    for _ in 1 2 3 4 5; do "$@" >/dev/null 2>&1; done
    local times=() t0 t1
    for ((i = 0; i < RUNS; i++)); do
        t0=$(now)
        "$@" >/dev/null 2>&1
        t1=$(now)
        times+=($((t1 - t0)))
    done
    local sorted
    sorted=$(printf '%s\n' "${times[@]}" | sort -n)
    local median p90
    median=$(sed -n "$((RUNS / 2 + 1))p" <<<"$sorted")
    p90=$(sed -n "$((RUNS * 9 / 10 + 1))p" <<<"$sorted")
    echo "$label $median $p90"
}

ms() { printf '%d.%02d' $(($1 / 1000)) $((($1 % 1000) / 10)); }

echo "skiff sandbox: cost per Bash command, median of $RUNS spawns (kernel $(uname -r))"
printf '%-44s %10s %10s %14s\n' "" "median ms" "p90 ms" "added ms"
base=""
while read -r label median p90; do
    [[ -z $label ]] && continue
    [[ -z $base ]] && base=$median
    added=$((median - base))
    sign=""
    ((added < 0)) && sign="-" && added=$((-added))
    printf '%-44s %10s %10s %14s\n' "${label//_/ }" "$(ms "$median")" "$(ms "$p90")" "$sign$(ms "$added")"
done < <(
    measure "direct:_bash_-c_true" "$shell" -c true
    measure "helper,_nothing_confined_(re-exec_only)" "$skiff" __sandbox -- "$shell" -c true
    measure "workspace-write_(Landlock)" "$skiff" __sandbox --fs workspace-write --write "$ws" -- "$shell" -c true
    measure "workspace-write_+_network_deny" "$skiff" __sandbox --fs workspace-write --write "$ws" --network deny -- "$shell" -c true
    measure "read-only_+_network_deny" "$skiff" __sandbox --fs read-only --network deny -- "$shell" -c true
)
