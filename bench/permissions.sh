#!/usr/bin/env bash
# The permission engine's cost per Bash call (parse and decide), median over the permission
# fuzzer's corpus (crates/skiff-core/tests/permission_fuzz/grammar.rs). SKIFF_BENCH_CASES sets
# the corpus size. Figures only, no assertions.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo bench -p skiff-core --bench permissions
