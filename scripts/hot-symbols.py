#!/usr/bin/env python3
"""Write crates/skiff-cli/hot-symbols.txt: the functions a release `skiff` runs in everyday use,
which the release link puts first in .text (crates/skiff-cli/build.rs).

Why: the kernel maps a binary's pages 64 KiB at a time around each page it touches, so code
spread over the whole .text made a 20-turn `skiff -p` map 9 of the binary's 11 MB of code
(most of its peak RSS) while it ran only 1.8 MB of it. Put together, that code maps once.

How: build the release binary as `cargo build --release` does (same profile, so the same
symbol names) with a linker map, run everyday scenarios under valgrind's callgrind against
skiff-mock (every executed instruction's address), and name the function sections those
addresses fall in. Valgrind does not know some system calls (Landlock's, pidfd_open), so skiff
takes other paths under it: then the scenarios run natively under `perf record -e page-faults`,
linked with the list so far, and each function whose page faulted outside the listed code
joins the list, until no new one does (at most REFINE rounds). The scenarios: `--version`; a one-turn answer; 20 Bash turns (bypass and
default modes, stream-json); the file tools (Read, Write, Edit, Glob, Grep, LS, TodoWrite);
the OpenAI-compatible path. Functions of earlier scenarios come first, so `--version` and a
one-turn answer touch the fewest pages.

Needs valgrind and perf. Takes two release builds in target/hot-symbols* and a relink per round
(20–35 minutes on 2 cores: 17 minutes with the helpers already built, 33 from nothing on an
AMD EPYC VM).
The names carry each crate's features too: scripts/feature-parity.py (run by .ci/run) checks
that a build of the whole workspace gives skiff's dependencies the features `-p skiff-cli` does,
so the list built here fits both.
Run it again after a toolchain or dependency update (symbol names carry a hash of both; a
stale name is skipped by the linker, so a stale file costs memory, never correctness: 20 Bash
turns peaked at 12 MiB instead of 7.5 when reedline left). hot-symbols.stamp records what the
list was made for; bench/lean.sh says when the tree no longer matches it:

    python3 scripts/hot-symbols.py            # from scratch
    python3 scripts/hot-symbols.py --refine   # only more rounds of page faults
    python3 scripts/hot-symbols.py --rename [--old-map MAP]
                                              # the list's names as this build spells them,
                                              # then the rounds of page faults

Code changes wear the list down too, more slowly: LTO numbers the copies of a function it
makes (`.1234`), and a function added anywhere renumbers those after it. The change that held
the session's `system/init` frame back for the sandbox probe renamed 165 of 8,365 names, and
20 Bash turns peaked at 8.9 MiB instead of 7.4 until `--rename` took the list over (the stamp
does not see this: bench/lean.sh's RSS row does).

`--rename` is for a dependency update (or another toolchain): the functions are the same, but
the crates' hashes in their names changed (a new dependency of skiff-core renames every
function of skiff-core and of the crates above it). It builds once with a map, keeps each
listed name the build has, and replaces each one it lacks by the build's functions of the same
name without the hash (`17h…E`) and LTO's copy number (`.1234`). A generic function's
instances share that name: all of them are taken when the build has at most RENAME_SPREAD times
as many as the list named (a few small functions too many cost less than one missing: each
function run outside the list maps 64 KiB around it). The rounds of page faults alone do not
make up for a list that lost names: each round finds only the first function run in each
64 KiB, and after `jsonschema` gave way to `boon` four rounds added 90, 93, 88 and 78 functions
while 20 Bash turns still peaked at 11.8 MiB. So give it the linker map of a build of the
commit the list was made for (`--old-map`): an instance whose size is the same as the listed
one's is taken alone. That map comes from a release build there:

    cargo rustc --release --locked -p skiff-cli --bin skiff -- -C link-arg=-Wl,-Map=/tmp/old.map
"""

import argparse
import bisect
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "crates", "skiff-cli", "hot-symbols.txt")
# What the list was made for (see stamp()); bench/lean.py compares it with the tree's.
STAMP = os.path.join(ROOT, "crates", "skiff-cli", "hot-symbols.stamp")
TARGET = os.path.join(ROOT, "target", "hot-symbols")
REFINE = int(os.environ.get("HOT_SYMBOLS_ROUNDS", "4"))
RENAME_MAX = 4
RENAME_SPREAD = 8


MAP = os.path.join(TARGET, "skiff.map")
# skiff's own target dir: built with other RUSTFLAGS than the helpers.
SKIFF_TARGET = TARGET + "-map"


def build_helpers():
    """skiff-sandbox and skiff-mock, without the map (their links would write it too)."""
    subprocess.run(["cargo", "build", "--release", "--locked", "--target-dir", TARGET,
                    "-p", "skiff-cli", "--bin", "skiff-sandbox", "-p", "skiff-testkit",
                    "--bin", "skiff-mock"], cwd=ROOT, check=True)
    return os.path.join(TARGET, "release", "skiff-mock")


def build_skiff():
    """The release skiff, linked with the list as it is now, its map, skiff-sandbox beside."""
    env = dict(os.environ)
    # RUSTFLAGS are not part of cargo's -C metadata: the symbol names match a plain build's.
    env["RUSTFLAGS"] = (env.get("RUSTFLAGS", "") + f" -C link-arg=-Wl,-Map={MAP}").strip()
    subprocess.run(["cargo", "build", "--release", "--locked", "--target-dir", SKIFF_TARGET,
                    "-p", "skiff-cli", "--bin", "skiff"], cwd=ROOT, env=env, check=True)
    release = os.path.join(SKIFF_TARGET, "release")
    shutil.copy(os.path.join(TARGET, "release", "skiff-sandbox"), release)
    return os.path.join(release, "skiff")


SECTION = re.compile(r"^\s*([0-9a-f]+)\s+[0-9a-f]+\s+([0-9a-f]+)\s+\d+\s+\S.*:\(\.text\.(\S+)\)$")


def text_sections(map_path):
    """(start, end, symbol) of each function section in the map, sorted by start."""
    out = []
    with open(map_path, encoding="utf-8", errors="replace") as f:
        for line in f:
            m = SECTION.match(line)
            if m:
                start, size = int(m.group(1), 16), int(m.group(2), 16)
                name = m.group(3)
                # LLVM's hot/cold prefixes: the symbol is what follows.
                for prefix in ("unlikely.", "hot.", "startup.", "exit.", "split."):
                    name = name.removeprefix(prefix)
                if size:
                    out.append((start, start + size, name))
    out.sort()
    return out


def executed(callgrind_out, binary):
    """Addresses of the instructions of `binary` that callgrind saw run."""
    addrs, ours = set(), False
    with open(callgrind_out, encoding="utf-8", errors="replace") as f:
        for line in f:
            if line.startswith("ob="):
                ours = line[3:].strip() == binary
            elif ours and line.startswith("0x"):
                addrs.add(int(line.split(None, 1)[0], 16))
    return addrs


def symbols_of(addrs, sections):
    """The sections the addresses fall in, in address order."""
    starts = [s[0] for s in sections]
    names = []
    seen = set()
    for a in sorted(addrs):
        i = bisect.bisect_right(starts, a) - 1
        if i >= 0 and a < sections[i][1] and sections[i][2] not in seen:
            seen.add(sections[i][2])
            names.append(sections[i][2])
    return names


def turn(*content):
    return {"content": list(content)}


def tool(name, **input):
    return {"type": "tool_use", "name": name, "input": input}


def text(t):
    return {"type": "text", "text": t}


def scenarios(work):
    """(name, script turns or None, skiff arguments, extra environment)."""
    bash = [turn(tool("Bash", command=f"echo turn {i}", description="Echo")) for i in range(20)]
    files = [
        turn(tool("Write", file_path=f"{work}/a.txt", content="one\ntwo\n")),
        turn(tool("Read", file_path=f"{work}/a.txt")),
        turn(tool("Edit", file_path=f"{work}/a.txt", old_string="two", new_string="three")),
        turn(tool("Glob", pattern="*.txt")),
        turn(tool("Grep", pattern="thr", output_mode="content", **{"-n": True})),
        turn(tool("LS", path=work)),
        turn(tool("TodoWrite", todos=[{"content": "x", "status": "completed",
                                       "activeForm": "x"}])),
    ]
    stream = ["--output-format", "stream-json", "--verbose"]
    return [
        ("version", None, ["--version"], {}),
        ("one turn", [turn(text("Hello."))], ["-p", "hi"], {}),
        ("bash, bypass", bash + [turn(text("done"))],
         ["-p", "run", "--permission-mode", "bypassPermissions"] + stream, {}),
        ("bash, default", bash + [turn(text("done"))], ["-p", "run"], {}),
        ("file tools", files + [turn(text("done"))],
         ["-p", "edit", "--permission-mode", "acceptEdits", "--output-format", "json"], {}),
        ("openai", [turn(tool("Read", file_path=f"{work}/a.txt")), turn(text("done"))],
         ["-p", "read", "--provider", "openai", "--model", "m"], {"openai": True}),
    ]


def position_dependent(binary):
    """Whether `binary` is a position-dependent executable (ELF type EXEC): its addresses at
    run time are those of its linker map."""
    with open(binary, "rb") as f:
        header = f.read(18)
    return len(header) == 18 and int.from_bytes(header[16:18], "little") == 2


def faulted(perf_data, binary):
    """Addresses (in the binary's own layout, as its linker map gives them) at which skiff's
    first process took a page fault."""
    # A position-independent binary's map starts at 0 and it runs wherever it was loaded; a
    # position-dependent one (the release link's -no-pie) runs at its map's addresses. Taking
    # the load address off those too put every fault 2 MiB (0x200000) early, on functions that
    # had not run, and the rounds of faults stopped converging.
    fixed = position_dependent(binary)
    out = subprocess.run(["perf", "script", "-i", perf_data, "--show-mmap-events", "-F",
                          "pid,addr,event"], capture_output=True, text=True, check=True).stdout
    base, main, addrs = None, None, set()
    mmap = re.compile(r"^\s*(\d+)(?:/\d+)? .*PERF_RECORD_MMAP2? \d+/\d+: \[0x([0-9a-f]+)\(0x[0-9a-f]+\) "
                      r"@ (0x[0-9a-f]+|0)[ \]].*: \S+ (\S+)$")
    for line in out.splitlines():
        m = mmap.match(line)
        if m:
            if base is None and m.group(4) == binary and int(m.group(3), 16) == 0:
                base, main = int(m.group(2), 16), int(m.group(1))
            continue
        parts = line.split()
        if base is not None and len(parts) >= 3 and parts[1].startswith("page-faults"):
            if int(parts[0].split("/")[0]) == main:
                addrs.add(int(parts[2], 16) - (0 if fixed else base))
    return addrs


def run(skiff, mock, name, turns, args, extra, work, home, tool):
    """Run one scenario under `tool` ("callgrind" or "perf"): the addresses it found."""
    fd, cg = tempfile.mkstemp(prefix="skiff-hot-", suffix=".out")
    os.close(fd)
    if tool == "perf":
        os.unlink(cg)  # perf keeps a file it would overwrite as NAME.old
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": home,
           "ANTHROPIC_API_KEY": "sk-hot-symbols", "OPENAI_API_KEY": "sk-hot-symbols"}
    proc = None
    try:
        if turns is not None:
            script = os.path.join(home, "script.json")
            with open(script, "w") as f:
                json.dump({"turns": turns}, f)
            proc = subprocess.Popen([mock, "--script", script, "--port", "0",
                                     "--idle-exit", "120"], stdout=subprocess.PIPE, text=True)
            line = proc.stdout.readline().strip() if proc.stdout else ""
            if not line.startswith("listening on "):
                sys.exit(f"skiff-mock did not start: {line!r}")
            url = line.removeprefix("listening on ")
            if extra.get("openai"):
                args = args + ["--base-url", url + "/v1"]
            else:
                env["ANTHROPIC_BASE_URL"] = url
        if tool == "callgrind":
            wrapper = ["valgrind", "--tool=callgrind", "--dump-instr=yes",
                       "--compress-strings=no", "--compress-pos=no",
                       f"--callgrind-out-file={cg}"]
        else:
            wrapper = ["perf", "record", "-q", "-e", "page-faults", "-c", "1", "-d", "-o", cg]
        subprocess.run(wrapper + [skiff] + args, cwd=work, env=env, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, timeout=300, check=False)
        found = executed(cg, skiff) if tool == "callgrind" else faulted(cg, skiff)
        print(f"  {name} ({tool}): {len(found)} addresses", file=sys.stderr)
        return found
    finally:
        if os.path.exists(cg):
            os.unlink(cg)
        if proc:
            proc.terminate()
            proc.wait()


def run_all(skiff, mock, tool, sections, names, seen, past=None):
    """Run every scenario under `tool`; add the functions found (beyond `past`, the end of the
    listed code, for page faults) to `names`. Returns how many were added."""
    added = 0
    with tempfile.TemporaryDirectory(prefix="skiff-hot-") as tmp:
        home, work = os.path.join(tmp, "home"), os.path.join(tmp, "work")
        os.makedirs(home)
        os.makedirs(work)
        for name, turns, args, extra in scenarios(work):
            found = run(skiff, mock, name, turns, args, extra, work, home, tool)
            if past is not None:
                found = {a for a in found if a >= past}
            for s in symbols_of(found, sections):
                if s not in seen:
                    seen.add(s)
                    names.append(s)
                    added += 1
    return added


HASH = re.compile(r"17h[0-9a-f]{16}E(\.[0-9A-Za-z_.]+)?$")
COPY = re.compile(r"(\.llvm)?\.[0-9]+$")


def unhashed(name):
    """A name without its hash (legacy mangling) and LTO's copy number (`.1234`)."""
    return COPY.sub("", HASH.sub("E", name))


def rename(names, sections, old_sections=()):
    """`names` as the build with `sections` spells them (see --rename); `old_sections`, the
    sections of the build the names came from, tell a generic function's instances apart by
    their size."""
    old_size = {s[2]: s[1] - s[0] for s in old_sections}
    present = {s[2] for s in sections}
    spellings = {}
    for s in sections:
        spellings.setdefault(unhashed(s[2]), []).append(s[2])
    listed = {}
    for name in names:
        listed[unhashed(name)] = listed.get(unhashed(name), 0) + 1
    sizes = {s[2]: s[1] - s[0] for s in sections}
    out, seen, kept, renamed, dropped = [], set(), 0, 0, 0
    for name in names:
        if name in present:
            found, kept = [name], kept + 1
        else:
            key = unhashed(name)
            found = spellings.get(key, [])
            size = old_size.get(name)
            same = [f for f in found if size is not None and sizes[f] == size]
            if same:
                found = same
            if 0 < len(found) <= max(RENAME_MAX, RENAME_SPREAD * listed[key]):
                renamed += 1
            else:
                found, dropped = [], dropped + 1
        for f in found:
            if f not in seen:
                seen.add(f)
                out.append(f)
    print(f"  {kept} names kept, {renamed} renamed, {dropped} not found", file=sys.stderr)
    return out


def stamp():
    """What the symbol names depend on: the toolchain, and skiff's dependencies with their
    versions and features (paths left out: the names do not depend on where the checkout is).
    One line each: `rustc -V`, then a digest of `cargo tree`'s packages and features."""
    rustc = subprocess.run(["rustc", "-V"], cwd=ROOT, capture_output=True, text=True,
                           check=True).stdout.strip()
    tree = subprocess.run(["cargo", "tree", "--locked", "-q", "-p", "skiff-cli", "-e", "normal",
                           "--prefix", "none", "-f", "{p} {f}"],
                          cwd=ROOT, capture_output=True, text=True, check=True).stdout
    lines = sorted({re.sub(r" \((/|proc-macro|\*).*?\)", "", line).strip()
                    for line in tree.splitlines() if line.strip()})
    digest = hashlib.sha256("\n".join(lines).encode()).hexdigest()[:16]
    return f"{rustc}\ndependencies {digest} ({len(lines)} packages)\n"


def write(names, sections):
    size = {s[2]: s[1] - s[0] for s in sections}
    hot = sum(size.get(n, 0) for n in names)
    with open(OUT, "w") as f:
        f.write("\n".join(names) + "\n")
    with open(STAMP, "w") as f:
        f.write(stamp())
    print(f"{len(names)} functions, {hot / 1e6:.2f} MB of {sum(size.values()) / 1e6:.2f} MB "
          f"of code: {os.path.relpath(OUT, ROOT)}", file=sys.stderr)


def parse_args():
    """The command line; anything else (`--help` included) stops before any build."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--refine", action="store_true",
                      help="only more rounds of page faults over the list as it is")
    mode.add_argument("--rename", action="store_true",
                      help="the list's names as this build spells them, then the rounds")
    parser.add_argument("--old-map", metavar="MAP",
                        help="with --rename: the linker map of the build the list was made for")
    args = parser.parse_args()
    if args.old_map and not args.rename:
        parser.error("--old-map goes with --rename")
    return args


def main():
    args = parse_args()
    for tool, package in (("valgrind", "valgrind"), ("perf", "linux-perf")):
        if not shutil.which(tool):
            sys.exit(f"{tool} is needed: apt-get install {package}")
    mock = build_helpers()
    names = []
    if (args.refine or args.rename) and os.path.exists(OUT):
        # Only the rounds of page faults, over the list as it is (renamed first).
        with open(OUT) as f:
            names = [line.strip() for line in f if line.strip()]
        if args.rename:
            old_sections = text_sections(args.old_map) if args.old_map else []
            build_skiff()
            sections = text_sections(MAP)
            if not sections:
                sys.exit(f"no function sections in {MAP}")
            names = rename(names, sections, old_sections)
            write(names, sections)
    else:
        # A list from another build names other functions: start from none.
        if os.path.exists(OUT):
            os.unlink(OUT)
        skiff = build_skiff()
        sections = text_sections(MAP)
        if not sections:
            sys.exit(f"no function sections in {MAP}")
        run_all(skiff, mock, "callgrind", sections, names, set())
        write(names, sections)
    seen = set(names)
    for _ in range(REFINE):
        skiff = build_skiff()
        sections = text_sections(MAP)
        listed = [s for s in sections if s[2] in seen]
        past = max(s[1] for s in listed) if listed else 0
        added = run_all(skiff, mock, "perf", sections, names, seen, past)
        print(f"  {added} functions faulted outside the list", file=sys.stderr)
        write(names, sections)
        if not added:
            break


if __name__ == "__main__":
    main()
