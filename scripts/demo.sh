#!/usr/bin/env bash
# Run skiff end to end against the bundled scripted mock model (no API key or network needed):
# builds both binaries, starts skiff-mock on an ephemeral port, asks `skiff -p`, stops the mock.
set -euo pipefail
cd "$(dirname "$0")/.."
script="${1:-examples/hello.json}"
prompt="${2:-hello}"

cargo build --release --locked -q -p skiff-cli -p skiff-testkit
out=$(mktemp)
./target/release/skiff-mock --script "$script" --idle-exit 60 >"$out" &
mock=$!
trap 'kill $mock 2>/dev/null || true; rm -f "$out"' EXIT
for _ in $(seq 1 100); do
  grep -q '^listening on ' "$out" && break
  sleep 0.05
done
url=$(sed -n 's/^listening on //p' "$out" | head -n 1)
[ -n "$url" ] || { echo "skiff-mock did not start" >&2; exit 1; }
echo "(scripted mock model at $url)" >&2
ANTHROPIC_BASE_URL="$url" ANTHROPIC_API_KEY="sk-mock-not-a-real-key" ./target/release/skiff -p "$prompt"
