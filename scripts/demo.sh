#!/usr/bin/env bash
# skiff's main job, offline: a SCRIPTED model (examples/fix-bug.json, not a real model) fixes a
# failing test in a copy of examples/buggy-project. The tools (Read, Bash, Edit) run for real.
# Usage: scripts/demo.sh [extra skiff flags, e.g. --output-format stream-json --verbose]
set -euo pipefail
cd "$(dirname "$0")/.."
# The first build takes a few minutes on 2 cores; cargo shows its progress.
echo "(building skiff: cargo build --release)" >&2
cargo build --release --locked -p skiff-cli
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r examples/buggy-project/. "$work/"
echo "(scripted model: replaying examples/fix-bug.json in a copy of examples/buggy-project at $work)" >&2
echo "--- before: bash test.sh" >&2
(cd "$work" && bash test.sh >&2) || true
echo "--- skiff -p" >&2
./target/release/skiff -p "The tests fail. Find the bug and fix it." \
  --cwd "$work" --provider script --script examples/fix-bug.json \
  --permission-mode acceptEdits --allowedTools "Bash(bash test.sh)" "$@"
echo "--- after: bash test.sh" >&2
(cd "$work" && bash test.sh >&2)
