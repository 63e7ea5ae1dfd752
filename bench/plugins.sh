#!/usr/bin/env bash
# Plugin benchmark: what enabled plugins cost a session's start. Prints figures only, no
# pass/fail.
#
#   ./bench/plugins.sh          # RUNS=30 per case
#
# With the scripted model (no network), in a fresh home, 0 and then 5 plugins installed from a
# local marketplace and enabled (each with 3 commands, a skill, an agent and a hook; MCP
# servers are left out: they connect in the background like any other, see bench/mcp.sh).
# The two cases alternate run by run (a shared machine's load drifts); median of RUNS, in ms:
#   1. to the first request: until `system/init` is on stdout (it is written as the first
#      model call starts)
#   2. a whole one-turn run (start, one model turn, the plugins' Stop hooks, exit): wall time
#      and CPU time (user + system, skiff and what it ran)
#   3. inside skiff (its debug log, immune to the machine's load): loading the plugins, and
#      finding the commands and skills (the workspace's, the user's and the plugins')
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
RUNS=${RUNS:-30}
cargo build --release --locked -q -p skiff-cli
SKIFF=$ROOT/target/release/skiff
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/home0" "$WORK/home5" "$WORK/ws"
echo '{"turns":[{"content":[{"type":"text","text":"done"}]}]}' > "$WORK/one.json"

# A marketplace of 5 plugins, installed and enabled in home5.
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
home5() { HOME=$WORK/home5 SKIFF_HOME=$WORK/home5/.skiff "$SKIFF" "$@"; }
home5 plugin marketplace add "$mkt" >/dev/null
for i in 1 2 3 4 5; do home5 plugin install "p$i@bench" --yes >/dev/null; done

run() { # N (plugins) → a one-turn run on stdout
  (cd "$WORK/ws" && HOME=$WORK/home$1 SKIFF_HOME=$WORK/home$1/.skiff "$SKIFF" -p go \
      --provider script --script "$WORK/one.json" --output-format stream-json --verbose 2>/dev/null)
}

first_us() { # N → µs from start to the first line on stdout (system/init)
  local s e
  s=$(date +%s%N)
  run "$1" | { read -r _; e=$(date +%s%N); echo $(( (e - s) / 1000 )); cat >/dev/null; }
}

whole_us() { # N → "wall cpu" µs of a whole run
  local s e t TIMEFORMAT='%3U %3S'
  s=$(date +%s%N)
  t=$( { time run "$1" >/dev/null; } 2>&1 )
  e=$(date +%s%N)
  awk -v w=$(( (e - s) / 1000 )) -v t="$t" 'BEGIN { split(t, a, " "); printf "%d %d\n", w, (a[1] + a[2]) * 1000000 }'
}

median_ms() { sort -n | awk '{a[NR]=$1} END {printf "%.2f", a[int((NR+1)/2)]/1000}'; }

loaded=$(run 5 | head -1 | grep -o '"source":"p[0-9]@bench"' | wc -l)
for n in 0 5; do : > "$WORK/first$n"; : > "$WORK/wall$n"; : > "$WORK/cpu$n"; done
for ((i = 0; i < RUNS; i++)); do
  for n in 0 5; do
    first_us "$n" >> "$WORK/first$n"
    read -r w c < <(whole_us "$n")
    echo "$w" >> "$WORK/wall$n"
    echo "$c" >> "$WORK/cpu$n"
  done
done
echo "== session start with the scripted model (median of $RUNS, the cases alternating)"
for n in 0 5; do
  label="$n plugins:"
  [ "$n" = 5 ] && label="5 plugins ($loaded loaded):"
  printf '  %-22s first request %s ms   whole run %s ms wall, %s ms CPU\n' "$label" \
    "$(median_ms < "$WORK/first$n")" "$(median_ms < "$WORK/wall$n")" "$(median_ms < "$WORK/cpu$n")"
done

inside() { # N → "load µs  commands µs" medians from the debug log
  local log=$WORK/home$1/.skiff/logs
  rm -rf "$log"
  for ((i = 0; i < RUNS; i++)); do SKIFF_LOG=debug run "$1" >/dev/null; done
  local load cmds
  load=$(cat "$log"/* | grep -o 'plugins loaded.*micros=[0-9]*' | grep -o '[0-9]*$' | median_ms)
  cmds=$(cat "$log"/* | grep -o 'commands and skills found.*micros=[0-9]*' | grep -o '[0-9]*$' | median_ms)
  echo "$load $cmds"
}
echo "== inside skiff (debug log, median of $RUNS)"
for n in 0 5; do
  read -r load cmds < <(inside "$n")
  printf '  %-22s loading plugins %s ms   finding commands and skills %s ms\n' "$n plugins:" "$load" "$cmds"
done
