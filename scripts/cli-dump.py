#!/usr/bin/env python3
"""Write everything skiff's command line shows into a directory, one file per case, to compare
two builds byte for byte after a change to the command-line definitions (args.rs):

    python3 scripts/cli-dump.py OLD/skiff /tmp/old
    python3 scripts/cli-dump.py NEW/skiff /tmp/new
    diff -r /tmp/old /tmp/new

Put both binaries at paths with the same file name (`skiff`): clap prints the name it was run
as. The command paths are found by walking `--help`'s command lists; for each: `--help`, `-h`,
`help PATH`, the bare command and a bogus flag; then the completions of five shells, the man
page and a few error cases. Each file holds the exit status, stdout and stderr; skiff runs in an
empty temporary home, also its working directory, written `$HOME` in the files.
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile

# Error and edge cases beside each command's help.
CASES = {
    "mcp-bogus": ["mcp", "bogus"],
    "export-without-id": ["sessions", "export"],
    "help-nonexistent": ["help", "nonexistent"],
    "bad-transport": ["mcp", "add", "--transport", "ftp"],
    "model-without-value": ["--model"],
    "misspelt-flag": ["--permision-mode=plan"],
    "serve-help-after-flag": ["mcp", "serve", "--permission-mode", "acceptEdits", "--help"],
    "help-mcp-add": ["help", "mcp", "add"],
    "version": ["--version"],
    "version-short": ["-V"],
    "help-help": ["help", "help"],
    "sessions-bogus": ["sessions", "--bogus"],
    "marketplace-help": ["plugin", "marketplace", "--help"],
    "bad-mode": ["--permission-mode", "bogus", "-p", "x"],
}
SHELLS = ["bash", "zsh", "fish", "elvish", "powershell"]


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: cli-dump.py SKIFF_BINARY OUT_DIR")
    binary, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    home = tempfile.mkdtemp(prefix="skiff-cli-dump-")
    try:
        dump(binary, out, home)
    finally:
        shutil.rmtree(home, ignore_errors=True)


def dump(binary, out, home):
    env = {"PATH": os.environ["PATH"], "HOME": home, "TERM": "dumb", "NO_COLOR": "1"}

    def run(args):
        p = subprocess.run([binary, *args], capture_output=True, env=env, cwd=home,
                           stdin=subprocess.DEVNULL)
        text = (f"rc={p.returncode}\n--stdout--\n{p.stdout.decode(errors='replace')}\n"
                f"--stderr--\n{p.stderr.decode(errors='replace')}")
        # The temporary home (and working directory) differs from run to run.
        return text.replace(home, "$HOME")

    def save(name, args):
        with open(os.path.join(out, name.replace("/", "_")), "w") as f:
            f.write(run(args))

    def commands(path):
        text = subprocess.run([binary, *path, "--help"], capture_output=True,
                              env=env).stdout.decode(errors="replace")
        listed = re.search(r"^Commands:\n((?:  .*\n|\n)*)", text, re.M)
        if not listed:
            return []
        names = (re.match(r"  (\S+)", line) for line in listed.group(1).splitlines())
        return [m.group(1).rstrip(",") for m in names if m and m.group(1) != "help"]

    paths = [[]]
    for path in paths:  # grows while it is walked
        paths.extend(path + [c] for c in commands(path))
    for path in paths:
        key = "_".join(path) or "TOP"
        save(f"help-{key}", path + ["--help"])
        save(f"h-{key}", path + ["-h"])
        save(f"helpcmd-{key}", ["help", *path])
        if path:
            save(f"bare-{key}", path)
        save(f"bogus-{key}", path + ["--bogus-flag"])
    for shell in SHELLS:
        save(f"comp-{shell}", ["completions", shell])
    save("man", ["man"])
    for name, args in CASES.items():
        save(name, args)
    print(f"{len(paths)} command paths, {len(os.listdir(out))} files in {out}")


if __name__ == "__main__":
    main()
