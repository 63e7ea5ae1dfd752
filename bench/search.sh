#!/usr/bin/env bash
# Grep and Glob against ripgrep on a generated 50,000-file tree (release build). Figures only,
# no assertions. Extra arguments go to the program, e.g. `bench/search.sh --files 5000 --runs 3`.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v rg >/dev/null || { echo "ripgrep (rg) is required: apt-get install ripgrep" >&2; exit 1; }
rg --version | head -1
cargo run --release --locked -q -p skiff-tools --example search_bench -- "$@"
