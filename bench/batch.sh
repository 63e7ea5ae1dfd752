#!/usr/bin/env bash
# `skiff batch` benchmark: wall time and peak memory of TASKS scripted tasks (default 50) at
# --jobs 1, 4 and 16. Prints figures only, no pass/fail assertions.
#
#   ./bench/batch.sh
#   TASKS=100 JOBS="1 8 32" ./bench/batch.sh
#
# Each task: a `git clone --shared` of a small repository, a child `skiff -p` with a scripted
# model (offline, zero delay: --provider script) making three turns — Write a file, Bash `ls`,
# a final text — then the diff of the checkout. So the figures are skiff batch's own overhead
# (clone, process start, supervision, diff), not model latency.
#
# Measures, per --jobs value:
#   wall      the whole batch, start to exit
#   tree RSS  the peak of the summed RSS of the batch process and all its descendants (child
#             skiffs, their tools, git), sampled from `ps` every 20 ms (short-lived peaks between
#             samples can be missed; shared pages are counted once per process)
#   batch RSS the peak RSS (VmHWM) of the batch process itself
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

TASKS=${TASKS:-50}
JOBS=${JOBS:-"1 4 16"}

cargo build --release --locked -q -p skiff-cli
SKIFF=$ROOT/target/release/skiff

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
export HOME=$WORK/home SKIFF_HOME=$WORK/home/.skiff
mkdir -p "$HOME"

# A small repository to clone.
REPO=$WORK/repo
mkdir -p "$REPO/src"
for i in $(seq 1 20); do printf 'line %s\n' $(seq 1 50) > "$REPO/src/file$i.txt"; done
git -C "$REPO" init -q -b main
git -C "$REPO" add -A
git -C "$REPO" -c user.name=bench -c user.email=bench@example.com commit -q -m base

# One script for every task: Write, Bash, answer.
cat > "$WORK/script.json" <<'EOF'
{"turns": [
  {"content": [{"type": "tool_use", "name": "Write",
                "input": {"file_path": "NOTES.md", "content": "notes\n"}}]},
  {"content": [{"type": "tool_use", "name": "Bash", "input": {"command": "ls src"}}]},
  {"content": [{"type": "text", "text": "done"}]}
]}
EOF
for i in $(seq 1 "$TASKS"); do
  printf '{"id":"t%s","repo":"%s","prompt":"take notes","permission_mode":"acceptEdits","allowed_tools":["Bash(ls:*)"],"args":["--script","%s"]}\n' \
    "$i" "$REPO" "$WORK/script.json"
done > "$WORK/tasks.jsonl"

# Peak summed RSS (KiB) of PID and its descendants, sampled until PID exits.
tree_peak() {
  local root=$1 peak=0 now
  while kill -0 "$root" 2>/dev/null; do
    now=$(ps -e -o pid=,ppid=,rss= | awk -v root="$root" '
      { parent[$1] = $2; rss[$1] = $3 }
      END {
        total = 0
        for (p in parent) {
          q = p
          while (q != "" && q != 0 && q != 1) {
            if (q == root) { total += rss[p]; break }
            q = parent[q]
          }
        }
        print total
      }')
    [ "$now" -gt "$peak" ] && peak=$now
    sleep 0.02
  done
  echo "$peak"
}

echo "skiff batch: $TASKS scripted tasks (3 turns each: Write, Bash, text), $(nproc) CPUs"
printf '%-6s %10s %12s %14s %14s\n' jobs wall "per task" "tree RSS" "batch RSS"
for jobs in $JOBS; do
  rm -rf "$WORK/results.jsonl" "$WORK/work" "$SKIFF_HOME/projects"
  start=$(date +%s.%N)
  "$SKIFF" batch "$WORK/tasks.jsonl" --jobs "$jobs" --out "$WORK/results.jsonl" \
    --workdir "$WORK/work" 2>"$WORK/stderr" &
  pid=$!
  hwm_file=$WORK/hwm
  ( while kill -0 "$pid" 2>/dev/null; do
      awk '/VmHWM/ {print $2}' "/proc/$pid/status" 2>/dev/null > "$hwm_file.tmp" \
        && [ -s "$hwm_file.tmp" ] && mv "$hwm_file.tmp" "$hwm_file"
      sleep 0.02
    done ) &
  hwm_pid=$!
  peak=$(tree_peak "$pid")
  status=0
  wait "$pid" || status=$?
  wait "$hwm_pid" || true
  end=$(date +%s.%N)
  ok=$(grep -c '"status":"success"' "$WORK/results.jsonl" || true)
  if [ "$status" != 0 ] || [ "$ok" != "$TASKS" ]; then
    echo "jobs $jobs: exit $status, $ok of $TASKS tasks succeeded" >&2
    tail -5 "$WORK/stderr" >&2
    exit 1
  fi
  awk -v s="$start" -v e="$end" -v n="$TASKS" -v j="$jobs" -v p="$peak" -v h="$(cat "$hwm_file" 2>/dev/null || echo 0)" \
    'BEGIN { w = e - s; printf "%-6s %9.2fs %10.0fms %11.1f MiB %11.1f MiB\n", j, w, 1000 * w / n, p / 1024, h / 1024 }'
done
