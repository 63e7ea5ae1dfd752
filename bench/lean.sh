#!/usr/bin/env bash
# Issue 34's figures beside their targets, from one command: stripped binary size, peak RSS of
# `skiff --version` and of 20 Bash turns against a zero-delay skiff-mock, the first answer over
# `skiff --version`, the time per Bash turn over one bash spawn, the fixed prompt prefix
# (system + tools) with and without --compact-prompt, the simulated 30-turn session's cost against
# Claude Code's (bench/cost.py), and (with BUILD_TIME=1) a clean release build's wall time in a
# temporary target directory, with the load average beside it. It says when
# crates/skiff-cli/hot-symbols.txt was made for another toolchain or other dependencies (the
# peak RSS rises until scripts/hot-symbols.py --rename is run).
#
#   ./bench/lean.sh                  # builds target/release's skiff and skiff-mock first
#   SKIP_BUILD=1 ./bench/lean.sh     # measures what target/release holds
#   BUILD_TIME=1 ./bench/lean.sh     # also times a clean `cargo build --release` (minutes)
#   SKIFF_BIN=PATH ./bench/lean.sh   # another skiff binary
#
# Figures only: it exits non-zero only when the set-up itself is broken.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -n "${BUILD_TIME:-}" ]; then
  tmp_target=$(mktemp -d "${TMPDIR:-/tmp}/skiff-lean-build.XXXXXX")
  trap 'rm -rf "$tmp_target"' EXIT
  load_before=$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo '?')
  start=$(date +%s)
  CARGO_TARGET_DIR=$tmp_target cargo build --release --locked -q -p skiff-cli --bin skiff \
    --timings
  export LEAN_BUILD_SECS=$(($(date +%s) - start))
  # The build's timings report (the dependencies against skiff's own final step), kept past
  # the target directory's removal.
  timings=$(mktemp "${TMPDIR:-/tmp}/skiff-lean-timings.XXXXXX")
  cp "$tmp_target/cargo-timings/cargo-timing.html" "$timings" 2>/dev/null || true
  export LEAN_BUILD_TIMINGS=$timings
  trap 'rm -rf "$tmp_target" "$timings"' EXIT
  export LEAN_BUILD_LOAD="$load_before → $(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo '?')"
  export LEAN_BUILD_CORES=$(nproc 2>/dev/null || echo '?')
  rm -rf "$tmp_target"
fi
if [ -z "${SKIP_BUILD:-}" ]; then
  # skiff-sandbox too: skiff runs it (beside its own executable) for each sandboxed Bash call.
  cargo build --release --locked -q -p skiff-cli -p skiff-testkit --bin skiff --bin skiff-sandbox \
    --bin skiff-mock
fi
python3 bench/lean.py
# The simulated 30-turn session's cost against Claude Code's (the table's cost row).
# (Not `exec`: the EXIT trap removes the build's timings report.)
SKIFF_BIN=${SKIFF_BIN:-target/release/skiff} python3 bench/cost.py
