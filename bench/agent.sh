#!/usr/bin/env bash
# Agent-loop benchmark: wall time, CPU time and memory of whole `skiff -p` processes against the
# zero-delay scripted mock model (target/release/skiff-mock). Prints figures only, no pass/fail
# assertions (it exits non-zero only when the set-up itself is broken).
#
#   ./bench/agent.sh                                   # 50 runs, 200 tool turns, 5 repeats
#   RUNS=100 TURNS=400 REPEATS=9 ./bench/agent.sh
#
# Measures:
#   1. startup: `skiff --version`
#   2. one-turn headless run: `skiff -p PROMPT --output-format stream-json --verbose`, one text
#      turn, one mock process for all runs
#   3. per-turn overhead: TURNS turns each calling Bash {"command":"true"} (then Read of a small
#      file instead) plus a final text turn; (total - one-turn) / TURNS = ms per tool turn
#   4. peak RSS of those runs (GNU time -v, or VmHWM polled from /proc)
# Timing uses hyperfine when it is installed (or installable with apt-get), else a bash loop.
#
# Every long run gets a freshly started mock: skiff-mock records every request it receives
# (raw body plus parsed JSON), so one mock serving several long runs grows by hundreds of MiB and
# slows down. The mock still parses each request body, which grows with the conversation, so
# the wall figures of (3) include some mock time; the "CPU" figures are skiff's own (its
# user+sys time, plus its bash children's for Bash turns).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

RUNS=${RUNS:-50}       # runs of the short measurements (1, 2)
TURNS=${TURNS:-200}    # tool turns of the long runs (3, 4)
REPEATS=${REPEATS:-5}  # runs of each long measurement; the median is reported
WARMUP=${WARMUP:-3}    # warm-up runs of the short measurements (the long ones get 1)

cargo build --release --locked -q -p skiff-cli -p skiff-testkit
SKIFF=$ROOT/target/release/skiff
MOCK=$ROOT/target/release/skiff-mock

# --- tools --------------------------------------------------------------------------------------

have() { command -v "$1" >/dev/null 2>&1; }

# Best-effort `apt-get install` (as root, or with password-less sudo); never fails the script.
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
  TIMER="bash loop (date +%s%N, adds ~1 ms of fork overhead per run)"
fi
if [ -n "$GNU_TIME" ]; then RSS_TOOL="GNU time -v"; else RSS_TOOL="VmHWM polled from /proc"; fi

# --- workspace, environment, mock ----------------------------------------------------------------

TMP=$(mktemp -d "${TMPDIR:-/tmp}/skiff-bench.XXXXXX")
cleanup() {
  local f
  for f in "$TMP"/*.pid; do
    [ -s "$f" ] && kill "$(cat "$f")" 2>/dev/null || true
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
  HTTP_PROXY HTTPS_PROXY ALL_PROXY http_proxy https_proxy all_proxy

# The mock (re)starter, also run by hyperfine's --prepare before each long run. The mock is
# started detached (never a child of this script) and stopped through its pid file.
cat >"$TMP/restart-mock" <<'EOF'
#!/usr/bin/env bash
# restart-mock MOCK SCRIPT PORT PIDFILE OUT: stop the mock of PIDFILE, serve SCRIPT on PORT
# (0: any free port) and wait until it listens. Diagnostics go to OUT.log.
set -euo pipefail
mock=$1 script=$2 port=$3 pidfile=$4 out=$5
exec 2>>"$out.log"
alive() { local s; s=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) && [ -n "$s" ] && [ "$s" != Z ]; }
if [ -s "$pidfile" ]; then
  old=$(cat "$pidfile")
  kill -KILL "$old" 2>/dev/null || true
  for _ in $(seq 1 2000); do alive "$old" || break; sleep 0.005; done
fi
for _ in $(seq 1 100); do # the port can take a moment to be free again
  : >"$out"
  "$mock" --script "$script" --port "$port" --idle-exit 120 </dev/null >"$out" 2>&1 &
  pid=$!
  echo "$pid" >"$pidfile"
  for _ in $(seq 1 4000); do
    grep -q '^listening on ' "$out" && exit 0
    alive "$pid" || break
    sleep 0.005
  done
  echo "skiff-mock did not start on port $port: $(cat "$out")" >&2
  sleep 0.05
done
exit 1
EOF

# start_mock NAME SCRIPT [PORT]: (re)start mock NAME serving SCRIPT; sets MOCK_URL and MOCK_PORT.
start_mock() {
  bash "$TMP/restart-mock" "$MOCK" "$2" "${3:-0}" "$TMP/mock-$1.pid" "$TMP/mock-$1.out"
  MOCK_URL=$(sed -n 's/^listening on //p' "$TMP/mock-$1.out" | head -n 1)
  MOCK_PORT=${MOCK_URL##*:}
  export ANTHROPIC_BASE_URL=$MOCK_URL
}

# tool_script FILE NAME INPUT_JSON: TURNS turns each calling NAME(INPUT), then one text turn.
tool_script() {
  local i
  {
    printf '{"turns":['
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

RUN_ARGS=(-p "Do the task." --output-format stream-json --verbose --max-turns $((TURNS + 10)))

# --- measuring helpers ----------------------------------------------------------------------------

PREPARE=() # command run (untimed) before each timed run, when set

# time_runs NAME RUNS WARMUP CMD...: run CMD in $WS (output discarded); writes one wall time in
# ms per line to $TMP/NAME.ms and the mean user+sys CPU ms to $TMP/NAME.cpu (hyperfine only).
time_runs() {
  local name=$1 runs=$2 warmup=$3
  shift 3
  local out=$TMP/$name.ms
  if have hyperfine; then
    local prepare=()
    [ ${#PREPARE[@]} -gt 0 ] && prepare=(--prepare "$(printf '%q ' "${PREPARE[@]}")")
    # hyperfine's outlier warnings are noise here; its errors are shown.
    if ! (cd "$WS" && hyperfine -N --style none --runs "$runs" --warmup "$warmup" \
      "${prepare[@]}" --export-json "$TMP/$name.hyperfine.json" -- "$(printf '%q ' "$@")" \
      >/dev/null 2>"$TMP/$name.err"); then
      cat "$TMP/$name.err" "$TMP"/mock-*.out.log >&2 2>/dev/null || true
      exit 1
    fi
    awk '/"times": \[/ {t = 1; next} t && /\]/ {t = 0} t {gsub(/[ ,]/, ""); printf "%.4f\n", $0 * 1000}' \
      "$TMP/$name.hyperfine.json" >"$out"
    awk -F: '/"user":|"system":/ {gsub(/[ ,]/, "", $2); s += $2} END {printf "%.2f\n", s * 1000}' \
      "$TMP/$name.hyperfine.json" >"$TMP/$name.cpu"
  else
    local i s e
    : >"$out"
    for ((i = 0; i < warmup + runs; i++)); do
      [ ${#PREPARE[@]} -gt 0 ] && "${PREPARE[@]}" >/dev/null
      s=$(date +%s%N)
      (cd "$WS" && "$@" >/dev/null 2>&1)
      e=$(date +%s%N)
      if ((i >= warmup)); then awk -v d=$((e - s)) 'BEGIN {printf "%.4f\n", d / 1e6}' >>"$out"; fi
    done
    echo "n/a" >"$TMP/$name.cpu"
  fi
}

# stats FILE WHAT: median | p90 | min | max | n of the ms values in FILE.
stats() {
  sort -g "$1" | awk -v what="$2" '
    {v[NR] = $1}
    END {
      n = NR
      if (what == "n") {print n; exit}
      if (what == "min") {printf "%.2f", v[1]; exit}
      if (what == "max") {printf "%.2f", v[n]; exit}
      if (what == "median") {printf "%.2f", (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2; exit}
      if (what == "p90") {i = int(0.9 * n + 0.999999); if (i < 1) i = 1; printf "%.2f", v[i]; exit}
    }'
}

# peak_rss_kib CMD...: peak resident set size of one run of CMD (in $WS), in KiB.
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
        if [ "$k" = "VmHWM:" ]; then hwm=$v; fi
      done 2>/dev/null <"/proc/$pid/status" || true
      sleep 0.002
    done
    wait "$pid" || true
    echo "$hwm"
  fi
}

mib() { awk -v k="$1" 'BEGIN {printf "%.1f", k / 1024}'; }
# calc EXPR [OPERAND...]: EXPR to 2 decimals, or n/a when an OPERAND is n/a.
calc() {
  local expr=$1 o
  shift
  for o in "$@"; do [ "$o" = n/a ] && { echo n/a; return; }; done
  awk "BEGIN {printf \"%.2f\", $expr}"
}

# check_run NAME TURNS_EXPECTED: one run whose stream-json must end in a successful result with
# the expected number of turns and no failed tool call (guards against a broken set-up).
check_run() {
  local log=$TMP/$1.check.jsonl
  (cd "$WS" && "$SKIFF" "${RUN_ARGS[@]}" >"$log" 2>"$TMP/$1.check.err") || true
  if ! tail -n 1 "$log" | grep -q '"subtype":"success"' ||
    ! tail -n 1 "$log" | grep -Eq "\"num_turns\":$2[,}]" ||
    grep -q '"is_error":true' "$log"; then
    echo "bench set-up broken: the $1 run did not end with $2 successful turns:" >&2
    tail -n 3 "$log" | cut -c1-400 >&2
    cat "$TMP/$1.check.err" >&2
    exit 1
  fi
}

echo "skiff agent benchmark: $("$SKIFF" --version), $(nproc) CPU(s), $(uname -sr)"
echo "timer: $TIMER; memory: $RSS_TOOL; workspace: an empty temp dir, HOME=SKIFF_HOME=temp"
echo

# --- 1. startup ---------------------------------------------------------------------------------

time_runs version "$RUNS" "$WARMUP" "$SKIFF" --version
printf '1. startup  skiff --version            median %6s ms  min %6s ms  (%s runs)\n' \
  "$(stats "$TMP/version.ms" median)" "$(stats "$TMP/version.ms" min)" "$(stats "$TMP/version.ms" n)"

# --- 2. one-turn headless run ---------------------------------------------------------------------

start_mock one "$TMP/one.json"
check_run one 1
time_runs one "$RUNS" "$WARMUP" "$SKIFF" "${RUN_ARGS[@]}"
ONE=$(stats "$TMP/one.ms" median)
ONE_CPU=$(cat "$TMP/one.cpu")
RSS_ONE=$(peak_rss_kib "$SKIFF" "${RUN_ARGS[@]}")
printf '2. one-turn skiff -p (stream-json)     median %6s ms  p90 %6s ms  min %6s ms  (%s runs)\n' \
  "$ONE" "$(stats "$TMP/one.ms" p90)" "$(stats "$TMP/one.ms" min)" "$(stats "$TMP/one.ms" n)"
printf '                                       CPU %s ms (user+sys, mean), peak RSS %s MiB\n' \
  "$ONE_CPU" "$(mib "$RSS_ONE")"

# --- 3. per-turn overhead, 4. peak RSS --------------------------------------------------------------

declare -A TOTAL PER CPU_PER RSS
for tool in bash read; do
  start_mock "$tool" "$TMP/$tool.json"
  check_run "$tool" $((TURNS + 1))
  PREPARE=(bash "$TMP/restart-mock" "$MOCK" "$TMP/$tool.json" "$MOCK_PORT" "$TMP/mock-$tool.pid"
    "$TMP/mock-$tool.out")
  time_runs "$tool" "$REPEATS" 1 "$SKIFF" "${RUN_ARGS[@]}"
  "${PREPARE[@]}"
  RSS[$tool]=$(peak_rss_kib "$SKIFF" "${RUN_ARGS[@]}")
  PREPARE=()
  TOTAL[$tool]=$(stats "$TMP/$tool.ms" median)
  PER[$tool]=$(calc "(${TOTAL[$tool]} - $ONE) / $TURNS")
  cpu=$(cat "$TMP/$tool.cpu")
  CPU_PER[$tool]=$(calc "($cpu - $ONE_CPU) / $TURNS" "$cpu" "$ONE_CPU")
  printf '3. %-35s total median %7s ms (min %7s, max %7s; %s runs) => %5s ms/tool turn\n' \
    "$TURNS x ${tool^} + 1 text turn" "${TOTAL[$tool]}" "$(stats "$TMP/$tool.ms" min)" \
    "$(stats "$TMP/$tool.ms" max)" "$(stats "$TMP/$tool.ms" n)" "${PER[$tool]}"
  printf '                                       CPU %s ms (user+sys, mean) => %s ms/tool turn; peak RSS %s MiB\n' \
    "$cpu" "${CPU_PER[$tool]}" "$(mib "${RSS[$tool]}")"
done

# Reference: what one `bash -c true` costs on this machine (part of every Bash tool turn).
time_runs spawn "$RUNS" "$WARMUP" bash -c true
SPAWN=$(stats "$TMP/spawn.ms" median)
printf '   reference: bash -c true alone       median %6s ms  => skiff overhead per Bash turn ~ %s ms\n' \
  "$SPAWN" "$(calc "${PER[bash]} - $SPAWN")"

# --- summary -------------------------------------------------------------------------------------

echo
printf '%-32s %12s %10s   %s\n' "figure" "skiff" "target" "(leanest Rust peer / Claude Code)"
printf '%-32s %12s %10s\n' "startup, --version (median)" "$(stats "$TMP/version.ms" median) ms" "-"
printf '%-32s %12s %10s   %s\n' "one-turn run (median)" "$ONE ms" "< 15 ms" "(13 ms / 375 ms)"
printf '%-32s %12s %10s   %s\n' "per Bash tool turn" "${PER[bash]} ms" "< 8 ms" "(8 ms / 31 ms)"
printf '%-32s %12s %10s\n' "per Read tool turn" "${PER[read]} ms" "-"
printf '%-32s %12s %10s   %s\n' "peak RSS, $TURNS Bash turns" "$(mib "${RSS[bash]}") MiB" "< 15 MiB" \
  "(15 MiB / 290 MiB)"
