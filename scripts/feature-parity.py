#!/usr/bin/env python3
"""Check that skiff's dependencies get the same features whether skiff is built alone
(`cargo build -p skiff-cli`, `cargo install --path crates/skiff-cli`) or with the whole
workspace (`cargo build --release --workspace`, which unifies the features of every member's
dependencies, skiff-testkit's mock server among them).

Why: a crate's features are part of its hash, and so of every symbol name of it and of the
crates built on it. crates/skiff-cli/hot-symbols.txt names the functions the release link
puts first; if the two builds differ, one of them gets a binary whose names the list does not
match, and loses the ordering (a few MiB of peak RSS). The fix for a difference is to name the
feature in crates/skiff-cli/Cargo.toml too (see the comment there).

    python3 scripts/feature-parity.py      # exit 1 and the differences, or exit 0
"""

import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def features(*selection):
    """{package id: features} of the normal and build dependencies of `selection`."""
    out = subprocess.run(["cargo", "tree", "--locked", "-e", "normal,build", "--prefix", "none",
                          "-f", "{p}|{f}", *selection], cwd=ROOT, check=True,
                         capture_output=True, text=True).stdout
    result = {}
    for line in out.splitlines():
        package, sep, feats = line.partition("|")
        if sep:
            result[package.removesuffix(" (*)").strip()] = set(
                f for f in feats.removesuffix(" (*)").split(",") if f)
    return result


def main():
    alone = features("-p", "skiff-cli")
    workspace = features("--workspace")
    differ = [(p, alone[p], workspace[p]) for p in sorted(alone)
              if p in workspace and alone[p] != workspace[p]]
    for package, a, w in differ:
        print(f"{package}: built alone {sorted(a)}, with the workspace {sorted(w)} "
              f"(add {sorted(w - a)} in crates/skiff-cli/Cargo.toml)", file=sys.stderr)
    if differ:
        sys.exit(f"feature-parity: {len(differ)} of skiff's dependencies get other features "
                 "in a workspace build")
    print(f"feature-parity: {len(alone)} packages, the same features alone and in the workspace")


if __name__ == "__main__":
    main()
