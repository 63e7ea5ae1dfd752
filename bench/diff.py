#!/usr/bin/env python3
"""What a large Write or Edit costs: the wall time of a `skiff -p` session against skiff-mock
that reads a file of N lines, then either writes entirely different content over it (Write:
every line changes) or replaces a word on every tenth line (Edit with replace_all: changes
scattered over the file), then answers. Each Edit/Write result carries a diff of the change
(`structuredPatch`) and the run's result a unified diff per changed file (`changes`).

Prints figures only (no pass/fail).

Usage: bench/diff.py [SKIFF]   (default target/release/skiff; needs target/release/skiff-mock:
       cargo build --release --locked -p skiff-cli -p skiff-testkit). Env: LINES (2000 20000
       100000), RUNS (3).
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SKIFF = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                        os.path.join(ROOT, "target/release/skiff"))
MOCK = os.path.join(ROOT, "target/release/skiff-mock")
SIZES = [int(n) for n in os.environ.get("LINES", "2000 20000 100000").split()]
RUNS = int(os.environ.get("RUNS", "3"))


def session_ms(home, ws, path, before, turns):
    """Median wall time of RUNS sessions playing `turns`, `path` reset to `before` each time."""
    script = os.path.join(home, "script.json")
    with open(script, "w") as f:
        json.dump({"turns": turns, "repeat": True}, f)
    mock = subprocess.Popen([MOCK, "--script", script, "--port", "0", "--idle-exit", "600"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        line = mock.stdout.readline().strip() if mock.stdout else ""
        if not line.startswith("listening on "):
            sys.exit(f"skiff-mock did not start: {line!r}")
        env = {"HOME": home, "PATH": "/usr/bin:/bin", "ANTHROPIC_API_KEY": "sk-bench",
               "ANTHROPIC_BASE_URL": line.removeprefix("listening on ")}
        times = []
        for _ in range(RUNS):
            with open(path, "w") as f:
                f.write(before)
            start = time.perf_counter()
            out = subprocess.run([SKIFF, "-p", "go", "--permission-mode", "bypassPermissions",
                                  "--max-turns", "5", "--output-format", "json"],
                                 env=env, cwd=ws, capture_output=True, text=True)
            times.append((time.perf_counter() - start) * 1000)
            if out.returncode != 0 or '"is_error":false' not in out.stdout:
                sys.exit(f"the session failed: {out.stdout[:300]} {out.stderr[:300]}")
        return statistics.median(times)
    finally:
        mock.terminate()
        mock.wait()


def main():
    if not os.path.exists(MOCK):
        sys.exit("build skiff-mock first: cargo build --release --locked -p skiff-testkit")
    print(f"large edits ({SKIFF}), median of {RUNS} sessions each")
    with tempfile.TemporaryDirectory() as home, tempfile.TemporaryDirectory() as ws:
        path = os.path.join(ws, "big.txt")
        for n in SIZES:
            before = "".join(f"line {i} alpha foo\n" if i % 10 == 0 else f"line {i} alpha\n"
                             for i in range(n))
            after = "".join(f"row {i} beta\n" for i in range(n))
            read = {"content": [{"type": "tool_use", "name": "Read",
                                 "input": {"file_path": path, "limit": 1}}]}
            done = {"content": [{"type": "text", "text": "done"}]}
            write = {"content": [{"type": "tool_use", "name": "Write",
                                  "input": {"file_path": path, "content": after}}]}
            edit = {"content": [{"type": "tool_use", "name": "Edit",
                                 "input": {"file_path": path, "old_string": "foo",
                                           "new_string": "bar", "replace_all": True}}]}
            w = session_ms(home, ws, path, before, [read, write, done])
            e = session_ms(home, ws, path, before, [read, edit, done])
            print(f"{n:>7} lines: Write of new content {w:8.0f} ms, "
                  f"Edit replace_all on every 10th line {e:8.0f} ms")


if __name__ == "__main__":
    main()
