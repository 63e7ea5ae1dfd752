#!/usr/bin/env python3
"""Issue 34's "lean" figures beside their targets, from one command (see bench/lean.sh).

Measures the release binaries in target/release (built by bench/lean.sh; skiff-sandbox beside
skiff is what each sandboxed Bash call runs, skiff itself without it):

- size of the (stripped) `skiff` binary;
- peak RSS of `skiff --version`;
- peak RSS of `skiff -p` running 20 Bash tool turns against a zero-delay `skiff-mock` (and
  whether crates/skiff-cli/hot-symbols.txt fits this toolchain and these dependencies, which
  that figure depends on);
- the first answer's time over `skiff --version`'s (a one-text-turn `skiff -p` run, median; the
  two run in turn, so both see the same phases of the machine);
- the time per Bash tool turn over one `bash -c true` spawn (TIMED_TURNS turns of
  `true`, minus the one-turn run, per turn, minus the spawn), and the same with the Bash
  sandbox off (`--settings`), which says how much of it the sandbox is;
- the time from the end of a model's answer asking for a Bash call (`true`) to skiff's next
  request, as skiff-mock's timeline notes them (free of the mock's delays and its timers' slack),
  with the answers coming at a model's pace (PACE_MS, 2.5 s by default: past the 2-second reuse of
  what the sandbox scans before a command) and at once: a zero-delay benchmark runs on warm caches
  with both cores busy and counts time-gated work once per session, a model's pace does neither;
- the fixed prefix of the first request (system prompt + tool definitions, as sent: JSON
  chars / 4), default and with `--compact-prompt`; captured by a one-shot Anthropic-compatible
  server in this script;
- with BUILD_TIME=1 (bench/lean.sh), the clean release build's time, split from cargo's
  `--timings` report into the dependencies and skiff's own final optimise-and-link step.

The runs share one HOME and working directory, empty at the start, so no user settings, memory
files or MCP servers change the figures; what skiff keeps between sessions there (the sandbox
probe's remembered answer, transcripts) carries over from run to run, as it does for a user. Figures only: the exit status is non-zero only when the set-up
itself is broken.
"""

import http.server
import importlib.util
import json
import os
import resource
import subprocess
import sys
import tempfile
import statistics
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SKIFF = os.environ.get("SKIFF_BIN") or os.path.join(ROOT, "target", "release", "skiff")
MOCK = os.environ.get("SKIFF_MOCK_BIN") or os.path.join(ROOT, "target", "release", "skiff-mock")
BASH_TURNS = 20
TIMED_TURNS = int(os.environ.get("TIMED_TURNS", "50"))
RUNS = int(os.environ.get("RUNS", "15"))
PACE_MS = int(os.environ.get("PACE_MS", "2500"))
PACE_TURNS = int(os.environ.get("PACE_TURNS", "4"))
PACE_RUNS = int(os.environ.get("PACE_RUNS", "3"))

MIB = 1024 * 1024

# Peak RSS of the 20 Bash turns with a current link-order list is 7.2-8.0 MiB on the 2-core
# VM; above this, the list has likely gone stale (see scripts/hot-symbols.py).
LISTED_TURNS_RSS = 8.5 * MIB


GNU_TIME = "/usr/bin/time"


def peak_rss_of(argv, env, cwd):
    """Run argv to completion; its peak RSS in bytes, as GNU time reports it.

    Not this script's own wait4(): Linux carries the RSS high-water mark of the process that
    exec()s into the child's ru_maxrss, and a child forked (or vforked) from Python starts at
    Python's ~14 MiB. GNU time's child starts at time's own size (~1 MiB) instead.
    """
    with tempfile.NamedTemporaryFile(mode="r", prefix="skiff-lean-rss-") as out:
        proc = subprocess.run([GNU_TIME, "-f", "%M", "-o", out.name, *argv], env=env,
                              cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE)
        if proc.returncode != 0:
            err = proc.stderr.decode(errors="replace")
            sys.exit(f"{argv[0]} failed ({proc.returncode}): {err[-2000:]}")
        kib = int(out.read().strip().splitlines()[-1])
    return kib * 1024


def evict(*paths):
    """Drop the binaries' pages from the page cache (`posix_fadvise(DONTNEED)`: clean pages
    of a file we can open, no root needed).

    Why: the kernel maps a file's pages 64 KiB around each page faulted, but only those already
    in the page cache. A binary just built or copied is cached whole, so every fault maps the
    whole window, and the same binary's peak RSS over 20 turns read 0.8 MiB higher than after
    a while in use (measured: 9.0 against 8.4 MiB, the same binary before and after
    `drop_caches`). Evicted and then run once, each binary is measured in the same state: the
    pages runs read, not the pages a build wrote.
    """
    for path in paths:
        try:
            fd = os.open(path, os.O_RDONLY)
        except OSError:
            continue
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


def clean_env(home):
    """The environment of a measured run: nothing from the user's set-up."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("ANTHROPIC_", "CLAUDE_", "SKIFF_", "OPENAI_"))}
    env.update(HOME=home, XDG_CONFIG_HOME=os.path.join(home, ".config"),
               ANTHROPIC_API_KEY="bench-key", NO_COLOR="1")
    return env


def sse(events):
    """An SSE body of (event, data) pairs."""
    return "".join(f"event: {e}\ndata: {json.dumps(d)}\n\n" for e, d in events).encode()


ANSWER = sse([
    ("message_start", {"type": "message_start", "message": {
        "id": "msg_bench", "type": "message", "role": "assistant", "model": "bench",
        "content": [], "stop_reason": None, "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 1}}}),
    ("content_block_start", {"type": "content_block_start", "index": 0,
                             "content_block": {"type": "text", "text": ""}}),
    ("content_block_delta", {"type": "content_block_delta", "index": 0,
                             "delta": {"type": "text_delta", "text": "ok"}}),
    ("content_block_stop", {"type": "content_block_stop", "index": 0}),
    ("message_delta", {"type": "message_delta",
                       "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                       "usage": {"output_tokens": 1}}),
    ("message_stop", {"type": "message_stop"}),
])


def first_request(extra_args, home, cwd):
    """The body of skiff's first Messages request (a one-shot server answers "ok")."""
    bodies = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802 (http.server's naming)
            length = int(self.headers.get("content-length", "0"))
            body = self.rfile.read(length)
            if self.path.startswith("/v1/messages/count_tokens"):
                data = json.dumps({"input_tokens": 1}).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                return
            bodies.append(json.loads(body))
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("content-length", str(len(ANSWER)))
            self.end_headers()
            self.wfile.write(ANSWER)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    env = clean_env(home)
    env["ANTHROPIC_BASE_URL"] = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        subprocess.run([SKIFF, "-p", "hi", *extra_args], env=env, cwd=cwd, check=True,
                       stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, timeout=120)
    except subprocess.CalledProcessError as e:
        sys.exit(f"skiff -p failed: {e.stderr.decode(errors='replace')[-2000:]}")
    finally:
        server.shutdown()
    main = [b for b in bodies if b.get("tools")]
    if not main:
        sys.exit("no request with tools arrived")
    return main[0]


def prefix_tokens(body):
    """System prompt + tool definitions as sent, in tokens (compact JSON chars / 4)."""
    system = body.get("system", "")
    chars = len(json.dumps(system, ensure_ascii=False, separators=(",", ":")))
    chars += len(json.dumps(body.get("tools", []), ensure_ascii=False, separators=(",", ":")))
    return chars // 4, len(body.get("tools", []))


def bash_turns_rss(home, cwd):
    """Peak RSS of `skiff -p` running BASH_TURNS Bash turns against a zero-delay skiff-mock."""
    turns = [{"content": [{"type": "tool_use", "name": "Bash",
                           "input": {"command": f"echo turn {i}", "description": "Echo"}}]}
             for i in range(BASH_TURNS)]
    turns.append({"content": [{"type": "text", "text": "done"}]})
    script = os.path.join(home, "bash-turns.json")
    with open(script, "w") as f:
        json.dump({"turns": turns}, f)
    mock = subprocess.Popen([MOCK, "--script", script, "--port", "0", "--idle-exit", "60"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        line = mock.stdout.readline().strip() if mock.stdout else ""
        if not line.startswith("listening on "):
            sys.exit(f"skiff-mock did not start: {line!r}")
        env = clean_env(home)
        env["ANTHROPIC_BASE_URL"] = line.removeprefix("listening on ")
        return peak_rss_of([SKIFF, "-p", "run the commands", "--permission-mode",
                            "bypassPermissions", "--max-turns", str(BASH_TURNS + 5)],
                           env, cwd)
    finally:
        mock.terminate()
        mock.wait()


class Mock:
    """A skiff-mock serving `turns` in a loop (each run takes the whole script)."""

    def __init__(self, home, name, turns, timeline=None):
        script = os.path.join(home, f"{name}.json")
        with open(script, "w") as f:
            json.dump({"turns": turns, "repeat": True}, f)
        extra = ["--timeline", timeline] if timeline else []
        self.proc = subprocess.Popen([MOCK, "--script", script, "--port", "0",
                                      "--idle-exit", "120", *extra],
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                     text=True)
        line = self.proc.stdout.readline().strip() if self.proc.stdout else ""
        if not line.startswith("listening on "):
            self.close()
            sys.exit(f"skiff-mock did not start: {line!r}")
        self.url = line.removeprefix("listening on ")

    def close(self):
        self.proc.terminate()
        self.proc.wait()


def run_ms(argv, env, cwd):
    """Wall time of one run of argv to completion, in ms (the script exits if it fails)."""
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, cwd=cwd, stdin=subprocess.DEVNULL,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    elapsed = (time.perf_counter() - start) * 1000
    if done.returncode != 0:
        sys.exit(f"{argv[0]} failed: {done.stderr.decode(errors='replace')[-2000:]}")
    return elapsed


def median_ms(argv, env, cwd, runs, warm_up=True):
    """Median wall time of `runs` runs of argv (after one warm-up run unless `warm_up` is
    false), in ms. `cwd` is a directory, or a function giving each run's."""
    times = []
    for i in range(runs + 1 if warm_up else runs):
        elapsed = run_ms(argv, env, cwd() if callable(cwd) else cwd)
        if i or not warm_up:
            times.append(elapsed)
    return statistics.median(times)


def interleaved_medians(runs, cwd, *commands):
    """Median wall times (ms) of several (argv, env) commands run in turn, `runs` rounds after
    one warm-up round: a figure that subtracts one from another then sees the same phases of
    the machine (a VM's speed drifts over a minute; run in batches, two binaries' difference
    moved by 0.5 ms from one run of this script to the next)."""
    times = [[] for _ in commands]
    for i in range(runs + 1):
        for (argv, env), kept in zip(commands, times):
            elapsed = run_ms(argv, env, cwd)
            if i:
                kept.append(elapsed)
    return [statistics.median(t) for t in times]


def text_turn(delay_ms=0):
    """A mock turn answering "done", `delay_ms` after the request."""
    return {"delay_first_byte_ms": delay_ms, "content": [{"type": "text", "text": "done"}]}


def bash_true_turn(delay_ms=0):
    """A mock turn asking for the Bash call `true`, `delay_ms` after the request."""
    return {"delay_first_byte_ms": delay_ms,
            "content": [{"type": "tool_use", "name": "Bash",
                         "input": {"command": "true", "description": "Nothing"}}]}


def timings(home, cwd):
    """(first answer over --version, per Bash turn over one bash spawn), in ms, and the raw
    figures behind them."""
    env = clean_env(home)
    spawn = median_ms(["bash", "-c", "true"], env, cwd, RUNS)
    text, bash = text_turn(), bash_true_turn()
    one = Mock(home, "one-turn", [text])
    many = Mock(home, "bash-true", [bash] * TIMED_TURNS + [text])
    try:
        run = [SKIFF, "-p", "go", "--permission-mode", "bypassPermissions",
               "--max-turns", str(TIMED_TURNS + 5)]
        # The one-turn run and `--version` in turn: the first answer is their difference.
        version, one_turn = interleaved_medians(
            RUNS, cwd, ([SKIFF, "--version"], env),
            (run, {**env, "ANTHROPIC_BASE_URL": one.url}))
        # Each run in a workspace skiff has not seen (nothing remembered for it).
        new_ws = median_ms(run, {**env, "ANTHROPIC_BASE_URL": one.url},
                           lambda: tempfile.mkdtemp(dir=os.path.dirname(cwd)), RUNS,
                           warm_up=False)
        many_env = {**env, "ANTHROPIC_BASE_URL": many.url}
        long_run = median_ms(run, many_env, cwd, max(3, RUNS // 3))
        # The same turns with the Bash sandbox off: how much of a turn the sandbox is.
        unsandboxed = median_ms(run + ["--settings", '{"sandbox":{"enabled":false}}'],
                                many_env, cwd, max(3, RUNS // 3))
    finally:
        one.close()
        many.close()
    per_turn = (long_run - one_turn) / TIMED_TURNS
    per_turn_off = (unsandboxed - one_turn) / TIMED_TURNS
    return {"first": one_turn - version, "per": per_turn - spawn, "version": version,
            "one_turn": one_turn, "per_turn": per_turn, "spawn": spawn, "new_ws": new_ws,
            "per_off": per_turn_off - spawn}


def answer_to_request_ms(home, cwd, delay_ms, turns, runs):
    """skiff's time from the end of each answer asking for a Bash call (`true`, sandboxed as by
    default) to its next request, as skiff-mock's timeline notes them: (median in ms, number of
    turns measured). Each run plays `turns` such answers, then a text answer; each answer comes
    `delay_ms` after its request."""
    bash, text = bash_true_turn(delay_ms), text_turn(delay_ms)
    timeline = os.path.join(home, f"timeline-{delay_ms}")
    mock = Mock(home, f"paced-{delay_ms}", [bash] * turns + [text], timeline)
    gaps = []
    try:
        env = {**clean_env(home), "ANTHROPIC_BASE_URL": mock.url}
        run = [SKIFF, "-p", "go", "--permission-mode", "bypassPermissions",
               "--max-turns", str(turns + 5)]
        for _ in range(runs):
            start = os.path.getsize(timeline)
            run_ms(run, env, cwd)
            with open(timeline) as f:
                f.seek(start)
                events = [line.split(" ", 1) for line in f.read().splitlines()]
            answered = None
            seen_request = False
            for nanos, what in events:
                if what == "answered":
                    # An end noted before this run's first request is the last run's.
                    answered = int(nanos) if seen_request else None
                elif what == "request POST /v1/messages":
                    if answered is not None:
                        gaps.append((int(nanos) - answered) / 1e6)
                    answered = None
                    seen_request = True
    finally:
        mock.close()
    if not gaps:
        sys.exit("skiff-mock's timeline shows no answer followed by a request")
    return statistics.median(gaps), len(gaps)


def build_split(timings_html):
    """(seconds before skiff's own final build started, seconds it took) from the report of
    `cargo build --timings`, or None when the report is missing or its layout unknown. The
    final step optimises and links the whole program (fat LTO) on one core."""
    try:
        with open(timings_html, encoding="utf-8") as f:
            text = f.read()
        start = text.index("const UNIT_DATA = ") + len("const UNIT_DATA = ")
        units, _ = json.JSONDecoder().raw_decode(text[start:])
        final = next(u for u in units if u.get("name") == "skiff-cli"
                     and "skiff-sandbox" not in u.get("target", "")
                     and "bin" in u.get("target", ""))
        return float(final["start"]), float(final["duration"])
    except (OSError, ValueError, StopIteration, KeyError, TypeError):
        return None


def hot_symbols_note():
    """A line when crates/skiff-cli/hot-symbols.txt was made for another toolchain or other
    dependencies than this tree's (its functions then spread over the binary again: more peak
    RSS), else None."""
    path = os.path.join(ROOT, "scripts", "hot-symbols.py")
    spec = importlib.util.spec_from_file_location("hot_symbols", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    try:
        with open(module.STAMP) as f:
            made_for = f.read()
        now = module.stamp()
    except (OSError, subprocess.CalledProcessError) as e:
        return f"hot-symbols.txt's stamp cannot be checked: {e}"
    if made_for == now:
        return None
    return ("hot-symbols.txt was made for another toolchain or other dependencies: "
            "run python3 scripts/hot-symbols.py --rename (see there)")


def row(figure, value, target, ok):
    print(f"{figure:<48} {value:>14}   target {target:<10} {'ok' if ok else 'OVER'}")


def main():
    for path in (SKIFF, MOCK):
        if not os.path.exists(path):
            sys.exit(f"{path} missing: run bench/lean.sh (it builds the release binaries)")
    if not os.access(GNU_TIME, os.X_OK):
        sys.exit(f"{GNU_TIME} (GNU time) is needed for the peak RSS figures: apt-get install time")
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    with tempfile.TemporaryDirectory(prefix="skiff-lean-") as tmp:
        home = os.path.join(tmp, "home")
        cwd = os.path.join(tmp, "work")
        os.makedirs(home)
        os.makedirs(cwd)
        size = os.path.getsize(SKIFF)
        evict(SKIFF, os.path.join(os.path.dirname(SKIFF), "skiff-sandbox"))
        # The first of each is the warm-up after the eviction (see evict()).
        version_rss = min(peak_rss_of([SKIFF, "--version"], clean_env(home), cwd)
                          for _ in range(6))
        bash_turns_rss(home, cwd)
        turns_rss = bash_turns_rss(home, cwd)
        full, n_full = prefix_tokens(first_request([], home, cwd))
        compact, n_compact = prefix_tokens(first_request(["--compact-prompt"], home, cwd))
        t = timings(home, cwd)
        paced, n_paced = answer_to_request_ms(home, cwd, PACE_MS, PACE_TURNS, PACE_RUNS)
        at_once, n_at_once = answer_to_request_ms(home, cwd, 0, 20, 3)
    print(f"skiff lean figures ({SKIFF})")
    row("release binary (stripped)", f"{size / MIB:.1f} MiB", "≤ 12 MB", size <= 12_000_000)
    row("peak RSS, `skiff --version`", f"{version_rss / MIB:.1f} MiB", "≤ 4 MiB",
        version_rss <= 4 * MIB)
    row(f"peak RSS, {BASH_TURNS} Bash turns (skiff-mock)", f"{turns_rss / MIB:.1f} MiB",
        "≤ 10 MiB", turns_rss <= 10 * MIB)
    stale = hot_symbols_note()
    if stale:
        print(f"    ({stale})")
    elif turns_rss > LISTED_TURNS_RSS:
        # Code changes renumber LTO's copies of functions, which the stamp cannot see.
        print(f"    (above the {LISTED_TURNS_RSS / MIB:.1f} MiB a current hot-symbols.txt gives: "
              "code changes may have renamed listed functions; python3 scripts/hot-symbols.py "
              "--rename --old-map MAP, see there)")
    row("first answer, over `skiff --version`", f"+{t['first']:.1f} ms", "≤ +2 ms",
        t["first"] <= 2)
    print(f"    ({t['one_turn']:.1f} ms one-turn run, {t['version']:.1f} ms --version; "
          f"medians of {RUNS}, run in turn)")
    print(f"    (in a workspace skiff has not seen: {t['new_ws']:.1f} ms, "
          f"+{t['new_ws'] - t['version']:.1f} ms over --version)")
    row("per tool turn, over one bash spawn", f"+{t['per']:.1f} ms", "≤ +1 ms", t["per"] <= 1)
    print(f"    ({t['per_turn']:.1f} ms per Bash turn over {TIMED_TURNS}, {t['spawn']:.1f} ms "
          f"bash -c true; with the sandbox off {t['per_off']:+.1f} ms)")
    label = "tool turn at a model's pace, answer to request"
    print(f"{label:<48} {paced:>11.1f} ms   "
          f"(answers after {PACE_MS / 1000:g} s; {at_once:.1f} ms with answers at once)")
    print(f"    (from the end of an answer asking for `true` to skiff's next request, the "
          f"sandboxed command included, as skiff-mock notes them: its own wake-up on the request "
          f"is in it too; medians of {n_paced} and {n_at_once} turns)")
    row(f"fixed prefix, system + {n_full} tools", f"{full:,} tok", "≤ 3,500", full <= 3500)
    row(f"same, --compact-prompt ({n_compact} tools)", f"{compact:,} tok", "≤ 1,400",
        compact <= 1400)
    build = os.environ.get("LEAN_BUILD_SECS")
    if build:
        secs = int(build)
        row("clean `cargo build --release`", f"{secs // 60} min {secs % 60:02d} s", "≤ 4 min",
            secs <= 240)
        print(f"    ({os.environ.get('LEAN_BUILD_CORES', '?')} cores, load average "
              f"{os.environ.get('LEAN_BUILD_LOAD', '?')} over the build)")
        split = build_split(os.environ.get("LEAN_BUILD_TIMINGS", ""))
        if split:
            before, final = split
            print(f"    ({before:.0f} s of dependencies, then {final:.0f} s for skiff itself: "
                  "the whole program optimised and linked as one unit, on one core)")
    else:
        print("clean `cargo build --release`: BUILD_TIME=1 ./bench/lean.sh times one")


if __name__ == "__main__":
    main()
