#!/usr/bin/env python3
"""Agent SDK start-up: time from spawning the CLI to its `initialize` response and to the first
`system/init` frame (after the first user message), as an SDK host sees them over pipes.
Prints figures only. Usage: bench/sdk.py SKIFF [CLAUDE] (RUNS env, default 20)."""
import json, os, statistics, subprocess, sys, tempfile, time

RUNS = int(os.environ.get("RUNS", "20"))

def once(cmd, cwd, env):
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, cwd=cwd, env=env, stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    p.stdin.write(json.dumps({"type": "control_request", "request_id": "req_1_init",
                              "request": {"subtype": "initialize", "hooks": None}}) + "\n")
    p.stdin.flush()
    t_init = t_sys = None
    for line in p.stdout:
        try:
            v = json.loads(line)
        except ValueError:
            continue
        if v.get("type") == "control_response" and t_init is None:
            t_init = time.perf_counter() - t0
            p.stdin.write(json.dumps({"type": "user", "session_id": "", "parent_tool_use_id": None,
                                      "message": {"role": "user", "content": "hi"}}) + "\n")
            p.stdin.flush()
        if v.get("type") == "system" and v.get("subtype") == "init":
            t_sys = time.perf_counter() - t0
            break
    p.kill()
    p.wait()
    return t_init, t_sys

def bench(name, cmd, cwd, env):
    inits, syss = [], []
    for _ in range(RUNS):
        a, b = once(cmd, cwd, env)
        if a is not None:
            inits.append(a * 1000)
        if b is not None:
            syss.append(b * 1000)
    fmt = lambda xs: f"{statistics.median(xs):7.1f} ms" if xs else "      n/a"
    print(f"  {name:8} initialize response {fmt(inits)}   first system/init {fmt(syss)}   (median of {RUNS})")

def main():
    skiff = os.path.abspath(sys.argv[1])
    claude = os.path.abspath(sys.argv[2]) if len(sys.argv) > 2 else None
    with tempfile.TemporaryDirectory() as d:
        script = os.path.join(d, "script.json")
        with open(script, "w") as f:
            json.dump({"turns": [{"content": [{"type": "text", "text": "hello"}]}]}, f)
        env = {"PATH": os.environ.get("PATH", ""), "HOME": d, "SKIFF_HOME": os.path.join(d, ".skiff")}
        base = ["--output-format", "stream-json", "--verbose", "--input-format", "stream-json"]
        bench("skiff", [skiff, *base, "--provider", "script", "--script", script], d, env)
        if claude:
            cenv = dict(env, ANTHROPIC_API_KEY="sk-test", ANTHROPIC_BASE_URL="http://127.0.0.1:9",
                        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1")
            bench("claude", [claude, *base], d, cenv)

main()
