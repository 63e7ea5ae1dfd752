#!/usr/bin/env bash
# Context-management benchmark: one long agentic run against the scripted mock model with
# compaction on. Prints figures only (no pass/fail assertions; it exits non-zero only when the
# set-up itself is broken).
#
#   ./bench/context.sh                                  # 300 tool turns, ~40 KB results
#   TURNS=500 RESULT_KB=20 EVERY=50 ./bench/context.sh
#   STRATEGY=trim ./bench/context.sh                    # trimming instead of summaries
#
# The run is crates/skiff-core/examples/context_bench.rs: the agent runs in that process and
# talks over HTTP to two skiff-mock processes, one serving the loop's turns (each a Read of a
# ~RESULT_KB KB file), one answering the summary calls. The mock reports input_tokens = request
# body bytes / 4, so the reported context grows with the conversation and drives compaction.
#
# Prints: peak RSS of the agent process (VmHWM; the mocks, which keep every request they
# receive, are separate processes), the number of compactions and trims, and the bytes sent per
# request over time (every EVERY-th loop request).
set -euo pipefail
cd "$(dirname "$0")/.."

export TURNS=${TURNS:-300}
export RESULT_KB=${RESULT_KB:-40}
export EVERY=${EVERY:-25}
export KEEP=${KEEP:-6}
export STRATEGY=${STRATEGY:-summarize}

cargo build --release --locked -q -p skiff-testkit --bin skiff-mock
cargo build --release --locked -q -p skiff-core --example context_bench

exec target/release/examples/context_bench target/release/skiff-mock
