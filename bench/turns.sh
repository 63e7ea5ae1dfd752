#!/usr/bin/env bash
# Per-turn overhead over a long session: crates/skiff-core/examples/turn_bench.rs runs TURNS
# tool turns (a Read of a ~RESULT_KB KB file each) against a zero-delay skiff-mock, with the
# history never compacted, and prints the client overhead per turn (first WINDOW turns vs the
# last WINDOW), allocations per turn and the peak RSS. Figures only, no pass/fail.
#
#   ./bench/turns.sh                       # 500 turns, 10 KB results
#   TURNS=1000 RESULT_KB=20 ./bench/turns.sh
#   PROVIDER=openai ./bench/turns.sh       # the same through chat completions (OpenAI dialect)
set -euo pipefail
cd "$(dirname "$0")/.."

export TURNS=${TURNS:-500}
export RESULT_KB=${RESULT_KB:-10}
export WINDOW=${WINDOW:-50}

cargo build --release --locked -q -p skiff-testkit --bin skiff-mock
cargo build --release --locked -q -p skiff-core --example turn_bench
exec target/release/examples/turn_bench target/release/skiff-mock
