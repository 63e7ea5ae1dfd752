#!/usr/bin/env bash
# Agent-loop benchmark: wall time and memory of whole `skiff -p` processes against the
# zero-delay scripted mock model (target/release/skiff-mock). Prints figures only, no
# pass/fail assertions (it exits non-zero only when the set-up itself is broken).
#
#   ./bench/agent.sh                        # defaults: 50 runs, 200 tool turns, 5 repeats
#   RUNS=100 TURNS=400 REPEATS=9 ./bench/agent.sh
#
# Measures:
#   1. startup: `skiff --version`
#   2. one-turn headless run: `skiff -p PROMPT --output-format stream-json --verbose`, one text turn
#   3. per-turn overhead: TURNS turns each calling Bash {"command":"true"} (then Read of a small
#      file) plus a final text turn; (total - one-turn) / TURNS = ms per tool turn
#   4. peak RSS of the TURNS-turn runs (GNU time -v, or VmHWM polled from /proc)
# Uses hyperfine when it is installed (or installable with apt-get), a `date +%s%N` loop otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

RUNS=${RUNS:-50}         # runs of the short measurements (1, 2)
TURNS=${TURNS:-200}      # tool turns in the long run (3, 4)
REPEATS=${REPEATS:-5}    # runs of the long measurement; the median is reported
WARMUP=${WARMUP:-3}

cargo build --release --locked -q -p skiff-cli -p skiff-testkit
SKIFF=$ROOT/target/release/skiff
MOCK=$ROOT/target/release/skiff-mock

# --- tools ------------------------------------------------------------------------------------

have() { command -v "$1" >/dev/null 2>&1; }

# Best-effort `apt-get install` (root, or password-less sudo); never fails the script.
apt_install() {
  have apt-get || return 1
  local sudo=()
  if [ "$(id -u)" != 0 ]; then
    have sudo || return 1
    sudo=(sudo -n)
  fi
  "${sudo[@]}" apt-get install -y -qq "$@" >/dev/null 2>&1 && return 0
  "${sudo[@]}" apt-get update -qq >/dev/null 2>&1 || true
  "${sudo[@]}" apt-get install -y -qq "$@" >/dev/null 2>&1
}

if ! have hyperfine; then
  echo "(installing hyperfine with apt-get...)" >&2
  apt_install hyperfine || echo "(hyperfine unavailable: timing with a plain bash loop)" >&2
fi
GNU_TIME=/usr/bin/time
if ! "$GNU_TIME" -f %M true >/dev/null 2>&1; then
  echo "(installing GNU time with apt-get...)" >&2
  apt_install time || true
fi
"$GNU_TIME" -f %M true >/dev/null 2>&1 || GNU_TIME=""

if have hyperfine; then
  TIMER="hyperfine $(hyperfine --version | awk '{print $2}')"
else
  TIMER="bash loop (date +%s%N; includes ~0.5 ms of fork overhead per run)"
fi
RSS_TOOL=${GNU_TIME:+GNU time -v (max RSS)}
RSS_TOOL=${RSS_TOOL:-VmHWM polled from /proc/PID/status}

# --- workspace, environment, mock ---------------------------------------------------------------

TMP=$(mktemp -d "${TMPDIR:-/tmp}/skiff-bench.XXXXXX")
MOCK_PIDS=()
cleanup() {
  local pid
  for pid in "${MOCK_PIDS[@]}"; do
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  rm -rf "$TMP"
}
trap cleanup EXIT

WS=$TMP/ws
mkdir -p "$WS" "$TMP/home"
printf 'line one\nline two\nline three\n' >"$WS/notes.txt"

# A clean, isolated environment: no user or project memory files, no stray API settings.
export HOME=$TMP/home SKIFF_HOME=$TMP/home XDG_CONFIG_HOME=$TMP/home/.config
export ANTHROPIC_API_KEY=sk-bench NO_PROXY=127.0.0.1,localhost no_proxy=127.0.0.1,localhost
unset ANTHROPIC_AUTH_TOKEN ANTHROPIC_MODEL ANTHROPIC_BETAS ANTHROPIC_CUSTOM_HEADERS \
  ANTHROPIC_BASE_URL SKIFF_MAX_RETRIES SKIFF_STREAM_IDLE_TIMEOUT_MS DISABLE_PROMPT_CACHING \
  HTTP_PROXY HTTPS_PROXY ALL_PROXY http_proxy https_proxy all_proxy 2>/dev/null || true

# start_mock SCRIPT: serve SCRIPT on an ephemeral port and print its URL.
start_mock() {
  local out=$TMP/mock.$RANDOM.out url=""
  "$MOCK" --script "$1" --idle-exit 300 >"$out" 2>&1 &
  MOCK_PIDS+=($!)
  for _ in $(seq 1 200); do
    url=$(sed -n 's/^listening on //p' "$out" | head -n 1)
    [ -n "$url" ] && break
    sleep 0.025
  done
  [ -n "$url" ] || { echo "skiff-mock did not start:" >&2; cat "$out" >&2; exit 1; }
  MOCK_URL=$url
}

# tool_script FILE NAME INPUT_JSON: TURNS turns each calling NAME(INPUT), then one text turn.
# `repeat` lets one mock serve consecutive runs (each run takes exactly TURNS + 1 answers).
tool_script() {
  local i
  {
    printf '{"repeat":true,"turns":['
    for ((i = 0; i < TURNS; i++)); do
      printf '{"content":[{"type":"tool_use","name":"%s","input":%s}]},' "$2" "$3"
    done
    printf '{"content":[{"type":"text","text":"Done."}]}]}\n'
  } >"$1"
}

printf '{"repeat":true,"turns":[{"content":[{"type":"text","text":"Done: the answer is 42."}]}]}\n' \
  >"$TMP/one.json"
tool_script "$TMP/bash.json" Bash '{"command":"true"}'
tool_script "$TMP/read.json" Read "{\"file_path\":\"$WS/notes.txt\"}"

PROMPT="Do the task."
RUN_ARGS=(-p "$PROMPT" --output-format stream-json --verbose --max-turns $((TURNS + 10)))

# --- timing helpers -------------------------------------------------------------------------------

# time_runs NAME RUNS WARMUP CMD...: run CMD (in $WS, output discarded) and write one wall time
# in ms per line to $TMP/NAME.ms.
time_runs() {
  local name=$1 runs=$2 warmup=$3
  shift 3
  local out=$TMP/$name.ms
  if have hyperfine; then
    local cmd
    cmd=$(printf '%q ' "$@")
    # hyperfine's outlier warnings are noise here; its errors are shown.
    if ! (cd "$WS" && hyperfine -N --style none --runs "$runs" --warmup "$warmup" \
      --export-json "$TMP/$name.json" -- "$cmd" >/dev/null 2>"$TMP/$name.err"); then
      cat "$TMP/$name.err" >&2
      exit 1
    fi
    awk '/"times": \[/ {t = 1; next} t && /\]/ {t = 0} t {gsub(/[ ,]/, ""); printf "%.4f\n", $0 * 1000}' \
      "$TMP/$name.json" >"$out"
  else
    local i s e
    : >"$out"
    for ((i = 0; i < warmup + runs; i++)); do
      s=$(date +%s%N)
      (cd "$WS" && "$@" >/dev/null 2>&1)
      e=$(date +%s%N)
      ((i >= warmup)) && awk -v d=$((e - s)) 'BEGIN {printf "%.4f\n", d / 1e6}' >>"$out"
    done
  fi
}

# stats FILE WHAT: median | p90 | min | mean | n of the ms values in FILE.
stats() {
  sort -g "$1" | awk -v what="$2" '
    {v[NR] = $1; sum += $1}
    END {
      n = NR
      if (what == "n") {print n; exit}
      if (what == "min") {printf "%.2f", v[1]; exit}
      if (what == "mean") {printf "%.2f", sum / n; exit}
      if (what == "median") {printf "%.2f", (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2; exit}
      if (what == "p90") {i = int(0.9 * n + 0.999999); if (i < 1) i = 1; printf "%.2f", v[i]; exit}
    }'
}

# peak_rss_kib CMD...: peak resident set size of one run of CMD, in KiB.
peak_rss_kib() {
  if [ -n "$GNU_TIME" ]; then
    (cd "$WS" && "$GNU_TIME" -v -o "$TMP/time.txt" "$@" >/dev/null 2>&1)
    awk -F: '/Maximum resident set size/ {gsub(/ /, "", $2); print $2}' "$TMP/time.txt"
  else
    local pid hwm=0 k v _
    (cd "$WS" && exec "$@" >/dev/null 2>&1) &
    pid=$!
    while kill -0 "$pid" 2>/dev/null; do
      while read -r k v _; do
        [ "$k" = "VmHWM:" ] && hwm=$v
      done <"/proc/$pid/status" 2>/dev/null || true
      sleep 0.002
    done
    wait "$pid"
    echo "$hwm"
  fi
}

mib() { awk -v k="$1" 'BEGIN {printf "%.1f", k / 1024}'; }
calc() { awk "BEGIN {printf \"%.2f\", $1}"; }

# check_run NAME TURNS_EXPECTED: one run whose stream-json must end in a successful result with
# the expected number of turns and no failed tool call (guards against a broken set-up).
check_run() {
  local log=$TMP/$1.check.jsonl
  (cd "$WS" && "$SKIFF" "${RUN_ARGS[@]}" >"$log" 2>"$TMP/$1.check.err") || true
  if ! tail -n 1 "$log" | grep -q '"subtype":"success"' ||
    ! tail -n 1 "$log" | grep -q "\"num_turns\":$2[,}]" ||
    grep -q '"is_error":true' "$log"; then
    echo "bench set-up broken: the $1 run did not finish with $2 successful turns" >&2
    tail -n 3 "$log" | cut -c1-400 >&2
    cat "$TMP/$1.check.err" >&2
    exit 1
  fi
}

echo "skiff agent benchmark: $("$SKIFF" --version), $(nproc) CPU(s), $(uname -sr)"
echo "timer: $TIMER; memory: $RSS_TOOL"
echo

# --- 1. startup --------------------------------------------------------------------------------

time_runs version "$RUNS" "$WARMUP" "$SKIFF" --version
printf '1. startup  skiff --version                 median %6s ms  min %6s ms  (%s runs)\n' \
  "$(stats "$TMP/version.ms" median)" "$(stats "$TMP/version.ms" min)" "$(stats "$TMP/version.ms" n)"

# --- 2. one-turn headless run ----------------------------------------------------------------------

start_mock "$TMP/one.json"
export ANTHROPIC_BASE_URL=$MOCK_URL
check_run one 1
time_runs one "$RUNS" "$WARMUP" "$SKIFF" "${RUN_ARGS[@]}"
ONE=$(stats "$TMP/one.ms" median)
printf '2. one-turn skiff -p (stream-json)          median %6s ms  p90 %6s ms  min %6s ms  (%s runs)\n' \
  "$ONE" "$(stats "$TMP/one.ms" p90)" "$(stats "$TMP/one.ms" min)" "$(stats "$TMP/one.ms" n)"
RSS_ONE=$(peak_rss_kib "$SKIFF" "${RUN_ARGS[@]}")

# --- 3. per-turn overhead, 4. peak RSS ---------------------------------------------------------------

declare -A TOTAL PER RSS
for tool in bash read; do
  start_mock "$TMP/$tool.json"
  export ANTHROPIC_BASE_URL=$MOCK_URL
  check_run "$tool" $((TURNS + 1))
  time_runs "$tool" "$REPEATS" 1 "$SKIFF" "${RUN_ARGS[@]}"
  TOTAL[$tool]=$(stats "$TMP/$tool.ms" median)
  PER[$tool]=$(calc "(${TOTAL[$tool]} - $ONE) / $TURNS")
  RSS[$tool]=$(peak_rss_kib "$SKIFF" "${RUN_ARGS[@]}")
  label="$TURNS x ${tool^} + 1 text turn"
  printf '3. %-40s total median %7s ms (min %7s, max %7s; %s runs)  => %5s ms/tool turn\n' \
    "$label" "${TOTAL[$tool]}" "$(stats "$TMP/$tool.ms" min)" \
    "$(sort -g "$TMP/$tool.ms" | tail -n 1 | xargs printf '%.2f')" "$(stats "$TMP/$tool.ms" n)" "${PER[$tool]}"
done

# Reference: what one `bash -c true` costs on this machine (part of every Bash tool turn).
time_runs spawn "$RUNS" "$WARMUP" bash -c true
SPAWN=$(stats "$TMP/spawn.ms" median)
printf '   reference: bash -c true alone              median %6s ms (skiff overhead per Bash turn ~ %s ms)\n' \
  "$SPAWN" "$(calc "${PER[bash]} - $SPAWN")"
printf '4. peak RSS  one-turn %s MiB, %s x Bash %s MiB, %s x Read %s MiB\n' \
  "$(mib "$RSS_ONE")" "$TURNS" "$(mib "${RSS[bash]}")" "$TURNS" "$(mib "${RSS[read]}")"

# --- summary ---------------------------------------------------------------------------------------

echo
printf '%-34s %12s %10s   %s\n' "figure" "skiff" "target" "(leanest Rust peer / Claude Code)"
printf '%-34s %12s %10s   %s\n' "startup (--version, median)" "$(stats "$TMP/version.ms" median) ms" "-" ""
printf '%-34s %12s %10s   %s\n' "one-turn run (median)" "$ONE ms" "< 15 ms" "(13 ms / 375 ms)"
printf '%-34s %12s %10s   %s\n' "per Bash tool turn" "${PER[bash]} ms" "< 8 ms" "(8 ms / 31 ms)"
printf '%-34s %12s %10s   %s\n' "per Read tool turn" "${PER[read]} ms" "-" ""
printf '%-34s %12s %10s   %s\n' "peak RSS, $TURNS Bash turns" "$(mib "${RSS[bash]}") MiB" "< 15 MiB" "(15 MiB / 290 MiB)"
