#!/usr/bin/env bash
# Print skiff's benchmark figures (release build). No assertions: figures only.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo bench --locked -q -p skiff-llm --bench llm
