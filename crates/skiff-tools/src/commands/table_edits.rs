//! Option tables of the commands that change files (`mkdir`, `rmdir`, `touch`, `rm`, `mv`,
//! `cp`, `tee`); see [`super::table`].

use super::options::{Table, t};

pub(super) static MKDIR: Table = t(
    "m=pvZ",
    &["mode=", "parents", "verbose", "context?", "help", "version"],
);

pub(super) static RMDIR: Table = t(
    "pv",
    &[
        "ignore-fail-on-non-empty",
        "parents",
        "verbose",
        "help",
        "version",
    ],
);

pub(super) static TOUCH: Table = t(
    "acd=fhmr<t=",
    &[
        "time=",
        "date=",
        "no-create",
        "no-dereference",
        "reference<",
        "help",
        "version",
    ],
);

pub(super) static RM: Table = t(
    "fiIrRdv",
    &[
        "force",
        "interactive?",
        "one-file-system",
        "no-preserve-root",
        "preserve-root?",
        "recursive",
        "dir",
        "verbose",
        "help",
        "version",
    ],
);

pub(super) static MV: Table = t(
    "bfinS=t>TuvZ",
    &[
        "backup?",
        "force",
        "interactive",
        "no-clobber",
        "no-copy",
        "strip-trailing-slashes",
        "suffix=",
        "target-directory>",
        "no-target-directory",
        "update?",
        "verbose",
        "context",
        "exchange",
        "debug",
        "help",
        "version",
    ],
);

pub(super) static CP: Table = t(
    "abdfHilLnPpRrsS=t>TuvxZ",
    &[
        "archive",
        "attributes-only",
        "backup?",
        "copy-contents",
        "debug",
        "force",
        "interactive",
        "link",
        "dereference",
        "no-clobber",
        "no-dereference",
        "preserve?",
        "no-preserve=",
        "parents",
        "recursive",
        "reflink?",
        "remove-destination",
        "sparse=",
        "strip-trailing-slashes",
        "symbolic-link",
        "suffix=",
        "target-directory>",
        "no-target-directory",
        "update?",
        "verbose",
        "keep-directory-symlink",
        "one-file-system",
        "context?",
        "help",
        "version",
    ],
);

pub(super) static TEE: Table = t(
    "aip",
    &[
        "append",
        "ignore-interrupts",
        "output-error?",
        "help",
        "version",
    ],
);
