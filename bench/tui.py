#!/usr/bin/env python3
"""The terminal UI's costs, measured from outside as a terminal sees them: skiff runs in a
pseudo-terminal (this script answers its cursor and device queries as a terminal would)
against a tiny Anthropic-style SSE server here that sends each answer delta when told to.

What skiff writes is fed to a terminal emulator (pyte: `pip install pyte`), so "on screen"
means on the emulated screen (the UI writes only the cells that change, so a word is not
always written whole).

Prints figures only (no pass/fail):
  * idle CPU: CPU time skiff uses over IDLE_S seconds with the UI open and nothing changing,
    and the bytes it writes meanwhile (both should be 0);
  * delta → screen: time from a delta leaving the server to its text appearing in what skiff
    writes to the terminal (median, p95, max over the deltas of a streamed paragraph);
  * bytes per byte: bytes written to the terminal while a STREAM_WORDS-word paragraph streams,
    per byte of the paragraph;
  * code blocks: the time from a prompt to the end of its answer on screen when the answer is
    CODE_LANGS fenced code blocks, each in another language (each highlighted), and skiff's
    resident memory before and after;
  * memory after TURNS turns: skiff's resident memory after a session of TURNS prompts, each
    answered with a paragraph (also bytes written per turn).

Usage: bench/tui.py [SKIFF]   (default target/release/skiff; build it first:
       cargo build --release -p skiff-cli). Env: TURNS (500), IDLE_S (5), STREAM_WORDS (400).
"""
import http.server
import json
import os
import pty
import queue
import re
import select
import statistics
import subprocess
import sys
import tempfile
import threading
import time

try:
    import pyte
except ImportError:
    raise SystemExit("bench/tui.py needs pyte (a terminal emulator): pip install pyte")

TURNS = int(os.environ.get("TURNS", "500"))
IDLE_S = float(os.environ.get("IDLE_S", "5"))
STREAM_WORDS = int(os.environ.get("STREAM_WORDS", "400"))
COLS, ROWS = 120, 30
# One short program per language for the code-block figure.
CODE = [
    ("rust", 'fn main() {\n    let v: Vec<u32> = (0..10).collect();\n    println!("{v:?}");\n}'),
    ("python", "def double(xs):\n    return [x * 2 for x in xs]  # each doubled"),
    ("ts", "export const f = async (x: number): Promise<string> => `${x}`;"),
    ("bash", 'for f in *.rs; do\n  echo "$f"\ndone'),
    ("go", 'func main() {\n\tfmt.Println("hi")\n}'),
    ("cpp", "#include <vector>\nint main() { std::vector<int> v{1, 2}; return v.size(); }"),
    ("java", "class A { public static void main(String[] a) { System.out.println(1); } }"),
    ("yaml", "name: ci\non: [push]"),
    ("md", "# Title\n- item `code`"),
    ("ruby", "def double(x) = x * 2\nputs double(2)"),
    ("c", "int main(void) { return 0; }"),
    ("json", '{"a": [1, true, null]}'),
    ("html", '<div class="a">x &amp; y</div>'),
    ("diff", "--- a\n+++ b\n@@ -1 +1 @@\n-old\n+new"),
]
CODE_LANGS = int(os.environ.get("CODE_LANGS", str(len(CODE))))


class Model:
    """What the SSE server answers: queued answers; a streamed one waits for `release`."""

    def __init__(self):
        self.answers = queue.Queue()
        self.sent = {}  # marker -> time the delta carrying it was written

    def events(self, answer, wfile):
        def send(kind, data):
            wfile.write(f"event: {kind}\ndata: {json.dumps(data)}\n\n".encode())
            wfile.flush()

        send("message_start", {"type": "message_start", "message": {
            "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
            "content": [], "stop_reason": None, "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 1}}})
        send("content_block_start", {"type": "content_block_start", "index": 0,
                                     "content_block": {"type": "text", "text": ""}})
        for chunk, marker, gate in answer:
            if gate is not None:
                gate.wait()
            if marker:
                self.sent[marker] = time.perf_counter()
            send("content_block_delta", {"type": "content_block_delta", "index": 0,
                                         "delta": {"type": "text_delta", "text": chunk}})
        send("content_block_stop", {"type": "content_block_stop", "index": 0})
        send("message_delta", {"type": "message_delta",
                               "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                               "usage": {"output_tokens": 50}})
        send("message_stop", {"type": "message_stop"})


MODEL = Model()


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_POST(self):
        length = int(self.headers.get("content-length", "0"))
        self.rfile.read(length)
        if not self.path.startswith("/v1/messages") or "count_tokens" in self.path:
            body = b'{"input_tokens": 10}'
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        answer = MODEL.answers.get()
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("connection", "close")
        self.end_headers()
        MODEL.events(answer, self.wfile)
        self.close_connection = True


class Term:
    """skiff in a pseudo-terminal; everything it writes is kept with arrival times."""

    def __init__(self, skiff, env, cwd):
        pid, fd = pty.fork()
        if pid == 0:
            os.chdir(cwd)
            os.execve(skiff, [skiff], env)
        self.pid, self.fd = pid, fd
        import fcntl, struct, termios
        fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLS, 0, 0))
        self.out = bytearray()
        self.lock = threading.Lock()
        self.seen = {}  # marker -> time first seen
        self.watch = []
        self.screen = pyte.Screen(COLS, ROWS)
        self.stream = pyte.ByteStream(self.screen)
        threading.Thread(target=self.read, daemon=True).start()

    def read(self):
        while True:
            try:
                r, _, _ = select.select([self.fd], [], [], 1)
                if not r:
                    continue
                data = os.read(self.fd, 65536)
            except OSError:
                return
            if not data:
                return
            now = time.perf_counter()
            with self.lock:
                self.out += data
                # Terminal queries: cursor position, device attributes.
                if b"\x1b[6n" in data:
                    os.write(self.fd, f"\x1b[{self.screen.cursor.y + 1};1R".encode())
                if b"\x1b[c" in data:
                    os.write(self.fd, b"\x1b[?62c")
                self.stream.feed(data)
                pending = [m for m in self.watch if m not in self.seen]
                if pending:
                    shown = "\n".join(self.screen.display)
                    for m in pending:
                        if f"{m} " in shown or shown.endswith(m):
                            self.seen[m] = now

    def send(self, text):
        os.write(self.fd, text.encode())

    def size(self):
        with self.lock:
            return len(self.out)

    def wait(self, pattern, timeout=30, since=0):
        end = time.time() + timeout
        while time.time() < end:
            with self.lock:
                if pattern.encode() in self.out[since:]:
                    return
            time.sleep(0.005)
        raise SystemExit(f"timed out waiting for {pattern!r}")

    def cpu_seconds(self):
        with open(f"/proc/{self.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def rss_kb(self):
        with open(f"/proc/{self.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        return 0


def paragraph(words, prefix):
    return " ".join(f"{prefix}{i}" for i in range(words))


def main():
    skiff = sys.argv[1] if len(sys.argv) > 1 else "target/release/skiff"
    skiff = os.path.abspath(skiff)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    with tempfile.TemporaryDirectory() as home, tempfile.TemporaryDirectory() as ws:
        env = {"PATH": os.environ.get("PATH", ""), "HOME": home,
               "SKIFF_HOME": os.path.join(home, ".skiff"), "TERM": "xterm-256color",
               "ANTHROPIC_API_KEY": "sk-bench", "ANTHROPIC_BASE_URL": url,
               "SKIFF_SANDBOX": "off"}
        t = Term(skiff, env, ws)
        t.wait("shift+tab")
        time.sleep(0.5)

        # Idle: nothing changes.
        cpu0, bytes0 = t.cpu_seconds(), t.size()
        time.sleep(IDLE_S)
        idle_cpu, idle_bytes = t.cpu_seconds() - cpu0, t.size() - bytes0
        print(f"idle: {idle_cpu * 1000:.1f} ms CPU over {IDLE_S:.0f} s "
              f"({100 * idle_cpu / IDLE_S:.2f}%), {idle_bytes} bytes written")

        # One streamed paragraph, delta by delta; each delta carries a marker word.
        words = [f"x{i}" for i in range(STREAM_WORDS)]
        chunks = []
        for i in range(0, len(words), 4):
            chunk = " ".join(words[i:i + 4]) + " "
            gate = threading.Event()
            chunks.append((chunk, words[i + 3] if i + 3 < len(words) else None, gate))
        t.watch = [m for _, m, _ in chunks if m]
        MODEL.answers.put(chunks + [("\n\nend-of-stream", None, None)])
        start = t.size()
        t.send("stream please\r")
        time.sleep(0.3)
        for _, marker, gate in chunks:
            gate.set()
            # One delta at a time: wait for it to be on screen (or 1 s) before the next.
            end = time.time() + 1
            while marker and marker not in t.seen and time.time() < end:
                time.sleep(0.0005)
        t.wait("end-of-stream", since=start)
        streamed = sum(len(c) for c, _, _ in chunks)
        written = t.size() - start
        if os.environ.get("DUMP"):
            with open(os.environ["DUMP"], "wb") as f:
                f.write(bytes(t.out[start:]))
        lat = sorted((t.seen[m] - MODEL.sent[m]) * 1000 for m in t.watch
                     if m in t.seen and m in MODEL.sent)
        if lat:
            p95 = lat[min(len(lat) - 1, int(len(lat) * 0.95))]
            print(f"delta → screen: median {statistics.median(lat):.2f} ms, p95 {p95:.2f} ms, "
                  f"max {lat[-1]:.2f} ms over {len(lat)} deltas")
        print(f"streaming: {written} bytes written for {streamed} bytes of answer "
              f"({written / streamed:.2f} bytes per byte)")
        time.sleep(0.5)

        # Code blocks, each in a language not highlighted yet in this session.
        rss_before = t.rss_kb()
        blocks = "\n\n".join(f"```{lang}\n{code}\n```" for lang, code in CODE[:CODE_LANGS])
        MODEL.answers.put([(f"Here:\n\n{blocks}\n\nend-of-code.", None, None)])
        mark = t.size()
        t0 = time.perf_counter()
        t.send("code please\r")
        t.wait("end-of-code.", since=mark)
        shown = (time.perf_counter() - t0) * 1000
        time.sleep(0.5)
        print(f"code blocks: {CODE_LANGS} languages on screen {shown:.0f} ms after the prompt; "
              f"RSS {rss_before / 1024:.1f} MB before → {t.rss_kb() / 1024:.1f} MB after")

        # A long session.
        t.watch = []
        rss_start = t.rss_kb()
        before = t.size()
        t0 = time.time()
        for i in range(TURNS):
            MODEL.answers.put([(paragraph(60, f"t{i}w") + f"\n\ndone-{i}.", None, None)])
            mark = t.size()
            t.send(f"turn {i}\r")
            t.wait(f"done-{i}.", since=mark)
        per_turn = (t.size() - before) / max(TURNS, 1)
        time.sleep(0.5)
        print(f"{TURNS} turns in {time.time() - t0:.1f} s: RSS {rss_start / 1024:.1f} MB at the "
              f"start → {t.rss_kb() / 1024:.1f} MB after; {per_turn:.0f} bytes written per turn")
        t.send("\x04")
        try:
            os.waitpid(t.pid, 0)
        except ChildProcessError:
            pass
    server.shutdown()


if __name__ == "__main__":
    main()
