#!/usr/bin/env python3
"""ACP start-up: time from spawning `skiff acp` to its `initialize` response, to its
`session/new` response, and to the end of a first one-line prompt (scripted model), as an
editor sees them over pipes. Prints figures only.
Usage: bench/acp.py [SKIFF] (default target/release/skiff; RUNS env, default 20)."""
import json, os, statistics, subprocess, sys, tempfile, time

RUNS = int(os.environ.get("RUNS", "20"))


def once(skiff, script, cwd, env):
    t0 = time.perf_counter()
    p = subprocess.Popen([skiff, "acp", "--provider", "script", "--script", script], cwd=cwd,
                         env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True)

    def send(msg):
        p.stdin.write(json.dumps(msg) + "\n")
        p.stdin.flush()

    send({"jsonrpc": "2.0", "id": 1, "method": "initialize",
          "params": {"protocolVersion": 1, "clientCapabilities": {}}})
    times = {}
    for line in p.stdout:
        v = json.loads(line)
        if v.get("id") == 1 and "initialize" not in times:
            times["initialize"] = time.perf_counter() - t0
            send({"jsonrpc": "2.0", "id": 2, "method": "session/new",
                  "params": {"cwd": cwd, "mcpServers": []}})
        elif v.get("id") == 2:
            times["session/new"] = time.perf_counter() - t0
            send({"jsonrpc": "2.0", "id": 3, "method": "session/prompt",
                  "params": {"sessionId": v["result"]["sessionId"],
                             "prompt": [{"type": "text", "text": "hi"}]}})
        elif v.get("id") == 3:
            times["first prompt"] = time.perf_counter() - t0
            break
    p.stdin.close()
    p.wait()
    return times


def main():
    skiff = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "target/release/skiff")
    with tempfile.TemporaryDirectory() as d:
        d = os.path.realpath(d)
        script = os.path.join(d, "script.json")
        with open(script, "w") as f:
            json.dump({"repeat": True, "turns": [{"content": [{"type": "text", "text": "hello"}]}]}, f)
        env = {"PATH": os.environ.get("PATH", ""), "HOME": d, "SKIFF_HOME": os.path.join(d, ".skiff")}
        runs = [once(skiff, script, d, env) for _ in range(RUNS)]
    print(f"skiff acp, spawn to ... (median of {RUNS} runs, scripted model)")
    for key in ["initialize", "session/new", "first prompt"]:
        xs = [r[key] * 1000 for r in runs if key in r]
        print(f"  {key:13} response {statistics.median(xs):7.1f} ms" if xs else f"  {key:13} n/a")


main()
