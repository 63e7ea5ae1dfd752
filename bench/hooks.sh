#!/usr/bin/env bash
# Hook benchmark: the added cost of one event with HOOKS no-op command hooks (run in parallel,
# as the loop runs them) and of an event no hook listens to. Prints figures only.
#
#   ./bench/hooks.sh            # 200 rounds, 3 hooks
#   ROUNDS=500 HOOKS=1 ./bench/hooks.sh
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --locked -q -p skiff-core --example hooks_bench
exec target/release/examples/hooks_bench
