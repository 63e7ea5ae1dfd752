#!/usr/bin/env bash
# MCP benchmark: what MCP servers cost a `skiff -p` run. Prints figures only, no pass/fail.
#
#   ./bench/mcp.sh                  # RUNS=20 per startup case, TURNS=200 for the per-call figure
#
# Measures, with the scripted model (no network, no mock server) and the test server
# crates/skiff-mcp/tests/fixtures/demo-server.js (node):
#   1. startup to the end of a one-turn run with 0, 1 and 5 stdio servers configured
#      (servers connect concurrently, so 5 should cost about what 1 costs: one node start)
#   2. per-call overhead: TURNS turns calling mcp__demo__add vs TURNS turns calling Read on a
#      small file; (total - one-turn) / TURNS = ms per tool turn
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
RUNS=${RUNS:-20}
TURNS=${TURNS:-200}
command -v node >/dev/null || { echo "node is needed (the test MCP server is a node script)" >&2; exit 1; }
cargo build --release --locked -q -p skiff-cli
SKIFF=$ROOT/target/release/skiff
SERVER=$ROOT/crates/skiff-mcp/tests/fixtures/demo-server.js
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
export HOME=$WORK/home SKIFF_HOME=$WORK/home/.skiff
mkdir -p "$HOME" "$WORK/ws"
echo hello > "$WORK/ws/small.txt"

configs() { # N → an --mcp-config JSON with N servers
  local n=$1 out='{"mcpServers":{' i
  for ((i = 0; i < n; i++)); do
    [ "$i" -gt 0 ] && out+=','
    out+="\"s$i\":{\"command\":\"node\",\"args\":[\"$SERVER\"]}"
  done
  echo "$out}}"
}

script() { # NAME INPUT N → a script with N tool turns then a text turn
  local name=$1 input=$2 n=$3 i
  {
    echo '{"turns":['
    for ((i = 0; i < n; i++)); do
      echo "{\"content\":[{\"type\":\"tool_use\",\"name\":\"$name\",\"input\":$input}]},"
    done
    echo '{"content":[{"type":"text","text":"done"}]}]}'
  }
}

ms_of() { # RUNS CMD… → median wall ms
  local runs=$1; shift
  local times=() i s e
  for ((i = 0; i < runs; i++)); do
    s=$(date +%s%N); "$@" >/dev/null 2>&1; e=$(date +%s%N)
    times+=($(( (e - s) / 1000 )))
  done
  printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR]=$1} END {printf "%.2f", a[int((NR+1)/2)]/1000}'
}

run() { # SCRIPT CONFIG
  (cd "$WORK/ws" && "$SKIFF" -p go --provider script --script "$1" --mcp-config "$2" \
    --allowedTools 'mcp__s0' --output-format stream-json --verbose)
}

script Read '{"file_path":"small.txt"}' 0 > "$WORK/one.json"
echo "== 1. one-turn run, startup included (median of $RUNS)"
for n in 0 1 5; do
  configs "$n" > "$WORK/c$n.json"
  printf '  %d server(s): %s ms\n' "$n" "$(ms_of "$RUNS" run "$WORK/one.json" "$WORK/c$n.json")"
done

echo "== 2. per tool turn over $TURNS turns (median of 3)"
script mcp__s0__add '{"a":2,"b":3}' "$TURNS" > "$WORK/mcp.json"
script Read '{"file_path":"small.txt"}' "$TURNS" > "$WORK/read.json"
base=$(ms_of 3 run "$WORK/one.json" "$WORK/c1.json")
mcp=$(ms_of 3 run "$WORK/mcp.json" "$WORK/c1.json")
read=$(ms_of 3 run "$WORK/read.json" "$WORK/c1.json")
awk -v b="$base" -v m="$mcp" -v r="$read" -v t="$TURNS" 'BEGIN {
  printf "  MCP tool (mcp__s0__add): %.3f ms/turn\n", (m - b) / t
  printf "  built-in Read:           %.3f ms/turn\n", (r - b) / t
}'
