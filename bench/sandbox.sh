#!/usr/bin/env bash
# The Bash sandbox's cost per command (release build), through the real Bash tool: `true` with
# no sandbox, under Landlock only, and in the namespace sandbox (network denied; network through
# skiff's proxy), median and 90th percentile of RUNS calls each (200 by default); then the first
# call of a session (namespace probe and proxy start); then round trips to a host port forwarded
# into the sandbox (`localhost:PORT` in allowedDomains) against the same port without a sandbox,
# the client writing each request in two pieces (python3). Figures only, no assertions; where the
# kernel lacks user namespaces or Landlock the affected rows fail and say so.
#
#   ./bench/sandbox.sh
#   RUNS=500 ./bench/sandbox.sh
set -euo pipefail
cd "$(dirname "$0")/.."

RUNS=${RUNS:-200}
cargo build --release --locked -q -p skiff-cli --bin skiff-sandbox
cargo build --release --locked -q -p skiff-tools --example sandbox_bench
helper=$PWD/target/release/skiff-sandbox
echo "kernel $(uname -r), $(nproc) cores"
exec "$PWD/target/release/examples/sandbox_bench" "$helper" "$RUNS"
