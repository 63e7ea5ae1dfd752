#!/usr/bin/env bash
# Issue 34's figures beside their targets: stripped binary size, peak RSS of `skiff --version`
# and of 20 Bash turns against a zero-delay skiff-mock, the fixed prompt prefix (system + tools)
# with and without --compact-prompt. Builds the release binaries first (a clean build takes
# several minutes; `SKIP_BUILD=1` measures what target/release holds; `SKIFF_BIN=PATH` another
# binary). Figures only.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${SKIP_BUILD:-}" ]; then
  cargo build --release --locked -q -p skiff-cli -p skiff-testkit --bin skiff --bin skiff-mock
fi
exec python3 bench/lean.py
