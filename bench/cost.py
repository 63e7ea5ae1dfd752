#!/usr/bin/env python3
"""Issue 34's "simulated 30-turn session cost, Sonnet prices" beside its target (≤ 0.45× Claude
Code's), from one command: `python3 bench/cost.py` (`SKIFF_BIN=target/debug/skiff` for a debug
build; default target/release/skiff).

The session: skiff works on a small Python project (created here) through 30 model calls — 29
tool turns of a typical read / search / edit / test task (TodoWrite, Glob, Grep, Read, Edit,
Write, Bash) and a closing answer — scripted by an Anthropic-compatible server in this script,
which records every request skiff sends. Tool results are skiff's real ones.

The cost: each request's input is split the way prompt caching bills it. skiff puts breakpoints
on the last tool, the system prompt and the last message, so request i reads from the cache
what request i-1 sent (its fixed prefix and messages) and writes what is new; the first request
writes everything. Tokens are JSON characters / 4 (as bench/lean.py counts the prefix); output
tokens are the characters of the scripted answers / 4. Sonnet prices, $ per million tokens:
input 3, cache write (5 min) 3.75, cache read 0.30, output 15.

Claude Code's side is simulated: the same conversation with Claude Code's fixed prefix (system
prompt + tool definitions) of CLAUDE_CODE_PREFIX tokens, measured in the issue's table (2.x,
same mock, same counting), under the same caching. Only the fixed prefix differs, so the ratio
says what the leaner prefix saves over a session whose tool results and answers are the same.

Prints the figures and the ratio; exits non-zero only when the set-up itself is broken.
"""

import http.server
import json
import os
import subprocess
import sys
import tempfile
import threading

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SKIFF = os.path.abspath(os.environ.get("SKIFF_BIN") or os.path.join(ROOT, "target", "release", "skiff"))
CLAUDE_CODE_PREFIX = int(os.environ.get("CLAUDE_CODE_PREFIX", "21992"))
# skiff's prefix before issue 34's prompt work (the table's "today" column), for comparison.
BEFORE_PREFIX = int(os.environ.get("BEFORE_PREFIX", "5470"))
TARGET = 0.45

# Sonnet, $ per million tokens.
PRICE_INPUT = 3.0
PRICE_CACHE_WRITE = 3.75
PRICE_CACHE_READ = 0.30
PRICE_OUTPUT = 15.0

MODELS = '''"""Stock items and their quantities."""

from dataclasses import dataclass, field


@dataclass
class Item:
    """One stock item."""

    sku: str
    name: str
    quantity: int = 0
    price_cents: int = 0
    tags: list = field(default_factory=list)

    def value_cents(self):
        """What the stock of this item is worth."""
        return self.quantity * self.price_cents

    def restock(self, amount):
        """Add `amount` units (must be positive)."""
        if amount <= 0:
            raise ValueError("amount must be positive")
        self.quantity += amount
'''

STORE = '''"""The store: items by SKU, with lookups and removals."""

from .models import Item


class Store:
    """Items by SKU."""

    def __init__(self):
        self._items = {}

    def add(self, item):
        """Add an item; a second one with the same SKU is an error."""
        if item.sku in self._items:
            raise KeyError(f"duplicate sku {item.sku}")
        self._items[item.sku] = item

    def get(self, sku):
        """The item with this SKU, or None."""
        return self._items.get(sku)

    def remove(self, sku, amount):
        """Take `amount` units of an item out of stock."""
        item = self._items[sku]
        # TODO: refuse to go below zero
        item.quantity -= amount
        return item.quantity

    def items(self):
        """Every item, by SKU."""
        return [self._items[k] for k in sorted(self._items)]

    def total_value_cents(self):
        """What the whole stock is worth."""
        return sum(i.value_cents() for i in self._items.values())
'''

REPORT = '''"""Plain-text reports of a store."""


def format_cents(cents):
    """12345 -> '123.45'."""
    return f"{cents // 100}.{cents % 100:02d}"


def stock_report(store):
    """One line per item: SKU, name, quantity and value."""
    lines = []
    for item in store.items():
        lines.append(f"{item.sku:<8} {item.name:<20} {item.quantity:>5} {format_cents(item.value_cents()):>10}")
    lines.append(f"total {format_cents(store.total_value_cents())}")
    return "\\n".join(lines)
'''

INIT = '''"""A tiny inventory package."""

from .models import Item
from .store import Store

__all__ = ["Item", "Store"]
'''

TESTS = '''import unittest

from inventory import Item, Store


class StoreTest(unittest.TestCase):
    def setUp(self):
        self.store = Store()
        self.store.add(Item("A1", "anvil", 3, 2500))
        self.store.add(Item("B2", "bucket", 10, 300))

    def test_total(self):
        self.assertEqual(self.store.total_value_cents(), 3 * 2500 + 10 * 300)

    def test_remove(self):
        self.assertEqual(self.store.remove("B2", 4), 6)

    def test_duplicate(self):
        with self.assertRaises(KeyError):
            self.store.add(Item("A1", "again"))


if __name__ == "__main__":
    unittest.main()
'''

README = '''# inventory

A tiny inventory package: `Item`, `Store` and plain-text reports.

Run the tests with `python3 -m unittest -q`.
'''

NEW_TEST = '''import unittest

from inventory import Item, Store
from inventory.report import format_cents, stock_report


class ReportTest(unittest.TestCase):
    def test_cents(self):
        self.assertEqual(format_cents(12345), "123.45")
        self.assertEqual(format_cents(5), "0.05")

    def test_report(self):
        store = Store()
        store.add(Item("A1", "anvil", 2, 150))
        self.assertIn("total 3.00", stock_report(store))


if __name__ == "__main__":
    unittest.main()
'''

TEST_CMD = "python3 -m unittest -q 2>&1 | tail -5"


def workspace(root):
    files = {
        "inventory/__init__.py": INIT,
        "inventory/models.py": MODELS,
        "inventory/store.py": STORE,
        "inventory/report.py": REPORT,
        "tests/__init__.py": "",
        "tests/test_store.py": TESTS,
        "README.md": README,
    }
    for path, text in files.items():
        full = os.path.join(root, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w") as f:
            f.write(text)


def script():
    """The 30 answers: (text, tool name, input) for 29 tool turns, then the closing text."""
    todos = lambda states: {"todos": [  # noqa: E731
        {"content": c, "activeForm": a, "status": s}
        for (c, a), s in zip([("Read the store code", "Reading the store code"),
                              ("Stop removals going below zero", "Stopping negative stock"),
                              ("Test the report", "Testing the report")], states)]}
    return [
        ("I'll plan this first.", "TodoWrite", todos(["in_progress", "pending", "pending"])),
        ("Let me see the project's files.", "Glob", {"pattern": "**/*.py"}),
        ("Reading the models.", "Read", {"file_path": "inventory/models.py"}),
        ("And the store.", "Read", {"file_path": "inventory/store.py"}),
        ("Which functions are there?", "Grep",
         {"pattern": "def ", "path": "inventory", "output_mode": "content", "-n": True}),
        ("Now the tests.", "Read", {"file_path": "tests/test_store.py"}),
        ("Running the tests as they are.", "Bash", {"command": TEST_CMD, "description": "Run the tests"}),
        ("Where is quantity changed?", "Grep", {"pattern": "quantity", "output_mode": "content"}),
        ("Refusing to go below zero.", "Edit", {
            "file_path": "inventory/store.py",
            "old_string": "        # TODO: refuse to go below zero\n        item.quantity -= amount",
            "new_string": "        if amount > item.quantity:\n            raise ValueError(f\"only {item.quantity} of {sku} in stock\")\n        item.quantity -= amount"}),
        ("The report module next.", "Read", {"file_path": "inventory/report.py"}),
        ("Negative cents would print wrong; guarding.", "Edit", {
            "file_path": "inventory/report.py",
            "old_string": "    return f\"{cents // 100}.{cents % 100:02d}\"",
            "new_string": "    sign = \"-\" if cents < 0 else \"\"\n    cents = abs(cents)\n    return f\"{sign}{cents // 100}.{cents % 100:02d}\""}),
        ("Tests again.", "Bash", {"command": TEST_CMD, "description": "Run the tests"}),
        ("Progress.", "TodoWrite", todos(["completed", "in_progress", "pending"])),
        ("Any TODOs left?", "Grep", {"pattern": "TODO"}),
        ("The README.", "Read", {"file_path": "README.md"}),
        ("Documenting the new rule.", "Edit", {
            "file_path": "README.md",
            "old_string": "Run the tests with",
            "new_string": "Removing more than is in stock raises `ValueError`.\n\nRun the tests with"}),
        ("A test for the report.", "Write", {"file_path": "tests/test_report.py", "content": NEW_TEST}),
        ("Running them.", "Bash", {"command": TEST_CMD, "description": "Run the tests"}),
        ("Adding a test of the new error.", "Edit", {
            "file_path": "tests/test_store.py",
            "old_string": "    def test_duplicate(self):",
            "new_string": "    def test_remove_too_many(self):\n        with self.assertRaises(ValueError):\n            self.store.remove(\"A1\", 4)\n\n    def test_duplicate(self):"}),
        ("Tests.", "Bash", {"command": TEST_CMD, "description": "Run the tests"}),
        ("Other docs?", "Glob", {"pattern": "**/*.md"}),
        ("Who imports what?", "Grep", {"pattern": "^from|^import", "output_mode": "content"}),
        ("The package's exports.", "Read", {"file_path": "inventory/__init__.py"}),
        ("Exporting the report too.", "Edit", {
            "file_path": "inventory/__init__.py",
            "old_string": "from .store import Store\n\n__all__ = [\"Item\", \"Store\"]",
            "new_string": "from .report import stock_report\nfrom .store import Store\n\n__all__ = [\"Item\", \"Store\", \"stock_report\"]"}),
        ("Listing the files.", "Bash", {"command": "ls -R inventory tests", "description": "List files"}),
        ("The whole suite once more.", "Bash", {"command": TEST_CMD, "description": "Run the tests"}),
        ("Done with the list.", "TodoWrite", todos(["completed", "completed", "completed"])),
        ("A last look at the change.", "Read", {"file_path": "inventory/store.py", "offset": 20, "limit": 12}),
        ("Checking the export.", "Bash", {
            "command": "python3 -c 'import inventory; print(inventory.__all__)'",
            "description": "Check the exports"}),
        ("Removals can no longer take stock below zero: `Store.remove` raises `ValueError` "
         "(inventory/store.py), the report prints negative amounts correctly, the README says "
         "so, `stock_report` is exported, and tests cover both; the suite passes.", None, None),
    ]


def sse(events):
    return "".join(f"event: {e}\ndata: {json.dumps(d)}\n\n" for e, d in events).encode()


def answer(i, text, tool, args):
    """The SSE body of answer `i`."""
    events = [("message_start", {"type": "message_start", "message": {
        "id": f"msg_{i}", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
        "content": [], "stop_reason": None, "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 1}}}),
        ("content_block_start", {"type": "content_block_start", "index": 0,
                                 "content_block": {"type": "text", "text": ""}}),
        ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                 "delta": {"type": "text_delta", "text": text}}),
        ("content_block_stop", {"type": "content_block_stop", "index": 0})]
    if tool:
        events += [
            ("content_block_start", {"type": "content_block_start", "index": 1, "content_block": {
                "type": "tool_use", "id": f"toolu_{i:02d}", "name": tool, "input": {}}}),
            ("content_block_delta", {"type": "content_block_delta", "index": 1, "delta": {
                "type": "input_json_delta", "partial_json": json.dumps(args)}}),
            ("content_block_stop", {"type": "content_block_stop", "index": 1})]
    events += [("message_delta", {"type": "message_delta", "delta": {
        "stop_reason": "tool_use" if tool else "end_turn", "stop_sequence": None},
        "usage": {"output_tokens": 1}}), ("message_stop", {"type": "message_stop"})]
    return sse(events)


def chars(v):
    return len(json.dumps(v, ensure_ascii=False, separators=(",", ":")))


def without_cache_control(v):
    if isinstance(v, dict):
        return {k: without_cache_control(x) for k, x in v.items() if k != "cache_control"}
    if isinstance(v, list):
        return [without_cache_control(x) for x in v]
    return v


def run_session(turns, home, cwd):
    """skiff's requests over the scripted session."""
    bodies = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802
            body = self.rfile.read(int(self.headers.get("content-length", "0")))
            if self.path.startswith("/v1/messages/count_tokens"):
                data = json.dumps({"input_tokens": 1}).encode()
                ctype = "application/json"
            else:
                req = json.loads(body)
                if not req.get("tools"):  # a side call (title, summary): not part of the figure
                    data = answer(999, "ok", None, None)
                else:
                    i = len(bodies)
                    bodies.append(req)
                    text, tool, args = turns[min(i, len(turns) - 1)]
                    data = answer(i, text, tool, args)
                ctype = "text/event-stream"
            self.send_response(200)
            self.send_header("content-type", ctype)
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("ANTHROPIC_", "CLAUDE_", "SKIFF_", "OPENAI_"))}
    env.update(HOME=home, XDG_CONFIG_HOME=os.path.join(home, ".config"), NO_COLOR="1",
               ANTHROPIC_API_KEY="bench-key",
               ANTHROPIC_BASE_URL=f"http://127.0.0.1:{server.server_address[1]}")
    try:
        subprocess.run([SKIFF, "-p", "Stop removals from taking stock below zero, and test it.",
                        "--permission-mode", "bypassPermissions", "--max-turns", "40",
                        "--model", "claude-sonnet-4-5"],
                       env=env, cwd=cwd, check=True, stdin=subprocess.DEVNULL,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=300)
    except subprocess.CalledProcessError as e:
        sys.exit(f"skiff -p failed: {e.stderr.decode(errors='replace')[-2000:]}")
    finally:
        server.shutdown()
    return bodies


def session_cost(prefix, messages, outputs):
    """$ of a session whose requests carry `prefix` tokens and `messages[i]` tokens of
    conversation, answered with `outputs[i]` tokens, under prompt caching."""
    total = 0.0
    for i, (m, o) in enumerate(zip(messages, outputs)):
        if i == 0:
            read, write = 0, prefix + m
        else:
            read = prefix + messages[i - 1]
            write = max(m - messages[i - 1], 0)
        total += read * PRICE_CACHE_READ + write * PRICE_CACHE_WRITE + o * PRICE_OUTPUT
    return total / 1e6


def main():
    if not os.path.exists(SKIFF):
        sys.exit(f"{SKIFF} missing: build it (cargo build --release -p skiff-cli) or set SKIFF_BIN")
    turns = script()
    with tempfile.TemporaryDirectory(prefix="skiff-cost-") as tmp:
        home, cwd = os.path.join(tmp, "home"), os.path.join(tmp, "work")
        os.makedirs(home)
        workspace(cwd)
        bodies = run_session(turns, home, cwd)
    if len(bodies) != len(turns):
        sys.exit(f"expected {len(turns)} requests, got {len(bodies)}")
    prefixes = [(chars(b.get("system", "")) + chars(b["tools"])) // 4 for b in bodies]
    messages = [chars(without_cache_control(b["messages"])) // 4 for b in bodies]
    outputs = []
    for text, tool, args in turns:
        content = [{"type": "text", "text": text}]
        if tool:
            content.append({"type": "tool_use", "id": "toolu_00", "name": tool, "input": args})
        outputs.append(chars(content) // 4)
    prefix = prefixes[0]
    if len(set(prefixes)) != 1:
        print(f"note: the prefix changed during the session: {sorted(set(prefixes))}")
    ours = session_cost(prefix, messages, outputs)
    theirs = session_cost(CLAUDE_CODE_PREFIX, messages, outputs)
    ratio = ours / theirs
    print(f"simulated session ({SKIFF}): {len(bodies)} requests, "
          f"conversation {messages[0]:,} → {messages[-1]:,} tok, output {sum(outputs):,} tok")
    print(f"{'fixed prefix, skiff':<48} {prefix:>10,} tok")
    print(f"{'fixed prefix, Claude Code (issue 34 table)':<48} {CLAUDE_CODE_PREFIX:>10,} tok")
    print(f"{'session cost, skiff (Sonnet prices)':<48} {'$' + format(ours, '.4f'):>14}")
    print(f"{'session cost, Claude Code (same conversation)':<48} {'$' + format(theirs, '.4f'):>14}")
    before = session_cost(BEFORE_PREFIX, messages, outputs) / theirs
    print(f"{'same session with a ' + format(BEFORE_PREFIX, ',') + '-token prefix':<48} "
          f"{before:>12.2f}× CC")
    print(f"{'simulated 30-turn session cost':<48} {ratio:>12.2f}× CC   "
          f"target ≤ {TARGET}×  {'ok' if ratio <= TARGET else 'OVER'}")


if __name__ == "__main__":
    main()
