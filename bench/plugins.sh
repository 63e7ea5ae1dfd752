#!/usr/bin/env bash
# Plugin benchmark: what enabled plugins cost a session's start. Prints figures only, no
# pass/fail.
#
#   ./bench/plugins.sh          # RUNS=30 per case
#
# With the scripted model (no network), in a fresh home, 0 and then 5 plugins installed from a
# local marketplace and enabled (each with 3 commands, a skill, an agent and a hook; MCP
# servers are left out: they connect in the background like any other, see bench/mcp.sh).
# Median of RUNS, in ms:
#   1. to the first request: until `system/init` is on stdout (it is written as the first
#      model call starts)
#   2. a whole one-turn run (start, one model turn, the plugins' Stop hooks, exit)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
RUNS=${RUNS:-30}
cargo build --release --locked -q -p skiff-cli
SKIFF=$ROOT/target/release/skiff
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
export HOME=$WORK/home SKIFF_HOME=$WORK/home/.skiff
mkdir -p "$HOME" "$WORK/ws"
echo '{"turns":[{"content":[{"type":"text","text":"done"}]}]}' > "$WORK/one.json"

# A marketplace of 5 plugins.
mkt=$WORK/mkt
mkdir -p "$mkt/.claude-plugin"
entries=""
for i in 1 2 3 4 5; do
  p=$mkt/plugins/p$i
  mkdir -p "$p/.claude-plugin" "$p/commands" "$p/skills/s$i" "$p/agents" "$p/hooks"
  echo "{\"name\":\"p$i\",\"version\":\"1.0.$i\",\"description\":\"plugin $i\"}" > "$p/.claude-plugin/plugin.json"
  for c in a b c; do
    printf -- '---\ndescription: command %s of plugin %s\n---\nDo %s with $ARGUMENTS.\n' "$c" "$i" "$c" > "$p/commands/$c.md"
  done
  printf -- '---\nname: s%s\ndescription: skill %s\n---\nUse the skill.\n' "$i" "$i" > "$p/skills/s$i/SKILL.md"
  printf -- '---\ndescription: agent %s\n---\nYou are agent %s.\n' "$i" "$i" > "$p/agents/helper.md"
  echo '{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"true"}]}]}}' > "$p/hooks/hooks.json"
  [ -n "$entries" ] && entries+=','
  entries+="{\"name\":\"p$i\",\"source\":\"./plugins/p$i\"}"
done
echo "{\"name\":\"bench\",\"owner\":{\"name\":\"bench\"},\"plugins\":[$entries]}" > "$mkt/.claude-plugin/marketplace.json"

first_ms() { # → ms from start to the first line on stdout (system/init)
  local s e
  s=$(date +%s%N)
  (cd "$WORK/ws" && "$SKIFF" -p go --provider script --script "$WORK/one.json" \
      --output-format stream-json --verbose 2>/dev/null) | { read -r _; e=$(date +%s%N); echo $(( (e - s) / 1000 )); cat >/dev/null; }
}

whole_ms() { # → ms of the whole run
  local s e
  s=$(date +%s%N)
  (cd "$WORK/ws" && "$SKIFF" -p go --provider script --script "$WORK/one.json" \
      --output-format stream-json --verbose >/dev/null 2>&1)
  e=$(date +%s%N)
  echo $(( (e - s) / 1000 ))
}

median() { # FN → median over RUNS, in ms with 2 decimals
  local i
  for ((i = 0; i < RUNS; i++)); do "$1"; done | sort -n \
    | awk '{a[NR]=$1} END {printf "%.2f", a[int((NR+1)/2)]/1000}'
}

report() { # LABEL
  printf '  %-22s first request %s ms   whole run %s ms\n' "$1" "$(median first_ms)" "$(median whole_ms)"
}

echo "== session start with the scripted model (median of $RUNS)"
report "0 plugins:"
"$SKIFF" plugin marketplace add "$mkt" >/dev/null
for i in 1 2 3 4 5; do "$SKIFF" plugin install "p$i@bench" --yes >/dev/null; done
loaded=$(cd "$WORK/ws" && "$SKIFF" -p go --provider script --script "$WORK/one.json" \
  --output-format stream-json --verbose 2>/dev/null | head -1 | grep -o '"source":"p[0-9]@bench"' | wc -l)
report "5 plugins ($loaded loaded):"
