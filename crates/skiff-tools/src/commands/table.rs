//! The option tables of the commands skiff runs without asking (GNU coreutils, grep, ripgrep,
//! findutils' `find` is in [`super::find`]). Every option a table lists is real and marked with
//! what it takes; an option a table does not list makes the command "not known harmless". When
//! in doubt an option is listed as a flag: a value then counts as an operand and is checked as
//! a path, never skipped.

use super::options::{Table, t, tn};
use super::table_edits::{CP, MKDIR, MV, RM, RMDIR, TEE, TOUCH};
use super::table_search::{DIFF, GREP, RG};

/// The table of a command, by name.
pub fn table(name: &str) -> Option<&'static Table> {
    Some(match name {
        "cat" => &CAT,
        "head" => &HEAD,
        "tail" => &TAIL,
        "wc" => &WC,
        "sort" => &SORT,
        "uniq" => &UNIQ,
        "cut" => &CUT,
        "tr" => &TR,
        "nl" => &NL,
        "od" => &OD,
        "hexdump" => &HEXDUMP,
        "md5sum" | "sha1sum" | "sha224sum" | "sha256sum" | "sha384sum" | "sha512sum" | "b2sum" => {
            &SUMS
        }
        "ls" => &LS,
        "stat" => &STAT,
        "file" => &FILE,
        "du" => &DU,
        "df" => &DF,
        "tree" => &TREE,
        "readlink" => &READLINK,
        "realpath" => &REALPATH,
        "basename" => &BASENAME,
        "dirname" => &DIRNAME,
        "which" => &WHICH,
        "sleep" | "whoami" => &HELP_ONLY,
        "pwd" => &PWD,
        "uname" => &UNAME,
        "id" => &ID,
        "date" => &DATE,
        "cmp" => &CMP,
        "diff" => &DIFF,
        "grep" | "egrep" | "fgrep" => &GREP,
        "rg" => &RG,
        "mkdir" => &MKDIR,
        "rmdir" => &RMDIR,
        "touch" => &TOUCH,
        "rm" => &RM,
        "mv" => &MV,
        "cp" => &CP,
        "tee" => &TEE,
        _ => return None,
    })
}

const HELP: &[&str] = &["help", "version"];

static HELP_ONLY: Table = t("", HELP);

static CAT: Table = t(
    "AbeEnstTuv",
    &[
        "show-all",
        "number-nonblank",
        "show-ends",
        "number",
        "squeeze-blank",
        "show-tabs",
        "show-nonprinting",
        "help",
        "version",
    ],
);

static HEAD: Table = tn(
    "c=n=qvz",
    &[
        "bytes=",
        "lines=",
        "quiet",
        "silent",
        "verbose",
        "zero-terminated",
        "help",
        "version",
    ],
);

static TAIL: Table = tn(
    "c=fFn=qs=vz",
    &[
        "bytes=",
        "follow?",
        "lines=",
        "max-unchanged-stats=",
        "pid=",
        "quiet",
        "retry",
        "silent",
        "sleep-interval=",
        "verbose",
        "zero-terminated",
        "help",
        "version",
    ],
);

static WC: Table = t(
    "clLmw",
    &[
        "bytes",
        "chars",
        "lines",
        "files0-from<",
        "max-line-length",
        "words",
        "total=",
        "help",
        "version",
    ],
);

static SORT: Table = t(
    "bdfgiMhnRrVcCmsuzk=S=t=T=o>",
    &[
        "ignore-leading-blanks",
        "dictionary-order",
        "ignore-case",
        "general-numeric-sort",
        "ignore-nonprinting",
        "month-sort",
        "human-numeric-sort",
        "numeric-sort",
        "random-sort",
        "random-source<",
        "reverse",
        "sort=",
        "version-sort",
        "batch-size=",
        "check?",
        "compress-program!",
        "debug",
        "files0-from<",
        "key=",
        "merge",
        "output>",
        "stable",
        "buffer-size=",
        "field-separator=",
        "temporary-directory=",
        "parallel=",
        "unique",
        "zero-terminated",
        "help",
        "version",
    ],
);

static UNIQ: Table = tn(
    "cdDf=is=uw=z",
    &[
        "count",
        "repeated",
        "all-repeated?",
        "skip-fields=",
        "group?",
        "ignore-case",
        "skip-chars=",
        "unique",
        "zero-terminated",
        "check-chars=",
        "help",
        "version",
    ],
);

static CUT: Table = t(
    "b=c=d=f=nsz",
    &[
        "bytes=",
        "characters=",
        "delimiter=",
        "fields=",
        "complement",
        "only-delimited",
        "output-delimiter=",
        "zero-terminated",
        "help",
        "version",
    ],
);

static TR: Table = t(
    "cCdst",
    &[
        "complement",
        "delete",
        "squeeze-repeats",
        "truncate-set1",
        "help",
        "version",
    ],
);

static NL: Table = t(
    "b=d=f=h=i=l=n=ps=v=w=",
    &[
        "body-numbering=",
        "section-delimiter=",
        "footer-numbering=",
        "header-numbering=",
        "line-increment=",
        "join-blank-lines=",
        "number-format=",
        "no-renumber",
        "number-separator=",
        "starting-line-number=",
        "number-width=",
        "help",
        "version",
    ],
);

static OD: Table = t(
    "A=j=N=S=t=vw?abcdfilosx",
    &[
        "address-radix=",
        "endian=",
        "skip-bytes=",
        "read-bytes=",
        "format=",
        "output-duplicates",
        "strings?",
        "traditional",
        "width?",
        "help",
        "version",
    ],
);

static HEXDUMP: Table = t(
    "bcCdoxe=f<n=s=v",
    &[
        "one-byte-octal",
        "one-byte-char",
        "canonical",
        "two-bytes-decimal",
        "two-bytes-octal",
        "two-bytes-hex",
        "format=",
        "format-file<",
        "length=",
        "skip=",
        "no-squeezing",
        "color?",
        "help",
        "version",
    ],
);

/// `-c` reads the files a list names: never without asking.
static SUMS: Table = t(
    "bc^tz",
    &[
        "binary",
        "check^",
        "tag",
        "text",
        "zero",
        "ignore-missing",
        "quiet",
        "status",
        "strict",
        "warn",
        "help",
        "version",
    ],
);

static LS: Table = t(
    "aAbBcCdDfFgGhHiI=klLmnNopqQrRsStT=uUvw=xXZ1",
    &[
        "all",
        "almost-all",
        "author",
        "escape",
        "block-size=",
        "ignore-backups",
        "color?",
        "colour?",
        "directory",
        "dired",
        "classify?",
        "file-type",
        "format=",
        "full-time",
        "group-directories-first",
        "no-group",
        "human-readable",
        "si",
        "dereference-command-line",
        "dereference-command-line-symlink-to-dir",
        "hide=",
        "hyperlink?",
        "indicator-style=",
        "inode",
        "ignore=",
        "kibibytes",
        "dereference",
        "literal",
        "numeric-uid-gid",
        "quote-name",
        "quoting-style=",
        "reverse",
        "recursive",
        "size",
        "sort=",
        "time=",
        "time-style=",
        "tabsize=",
        "width=",
        "context",
        "zero",
        "help",
        "version",
    ],
);

static STAT: Table = t(
    "Lfc=t",
    &[
        "dereference",
        "file-system",
        "cached=",
        "format=",
        "printf=",
        "terse",
        "help",
        "version",
    ],
);

/// `-C` compiles magic files (writes); `-z`/`-Z` run decompressors.
static FILE: Table = t(
    "bcC^dE e=F=f<hiklLm<nNprsSvz^Z^0P=",
    &[
        "brief",
        "checking-printout",
        "compile^",
        "debug",
        "exclude=",
        "exclude-quiet=",
        "separator=",
        "files-from<",
        "no-dereference",
        "mime",
        "mime-type",
        "mime-encoding",
        "keep-going",
        "list",
        "dereference",
        "magic-file<",
        "no-buffer",
        "no-pad",
        "preserve-date",
        "raw",
        "special-files",
        "no-sandbox",
        "uncompress^",
        "uncompress-noreport^",
        "print0",
        "parameter=",
        "extension",
        "apple",
        "help",
        "version",
    ],
);

static DU: Table = t(
    "0abB=cd=DhHklLmPsSt=xX<",
    &[
        "null",
        "all",
        "apparent-size",
        "block-size=",
        "bytes",
        "total",
        "dereference-args",
        "max-depth=",
        "files0-from<",
        "human-readable",
        "inodes",
        "dereference",
        "count-links",
        "no-dereference",
        "separate-dirs",
        "si",
        "summarize",
        "threshold=",
        "time?",
        "time-style=",
        "exclude-from<",
        "exclude=",
        "one-file-system",
        "help",
        "version",
    ],
);

static DF: Table = t(
    "aB=hHiklmPt=Tx=v",
    &[
        "all",
        "block-size=",
        "human-readable",
        "si",
        "inodes",
        "local",
        "no-sync",
        "output?",
        "portability",
        "print-type",
        "sync",
        "total",
        "type=",
        "exclude-type=",
        "help",
        "version",
    ],
);

/// `tree`'s long options; `-o` writes, `-R` writes `00Tree.html` files.
static TREE: Table = t(
    "adlfxL=R^P=I=o>sphugDFqNQnCAStvUrciJX",
    &[
        "noreport",
        "dirsfirst",
        "filesfirst",
        "gitignore",
        "charset=",
        "filelimit=",
        "timefmt=",
        "prune",
        "matchdirs",
        "ignore-case",
        "du",
        "si",
        "sort=",
        "nolinks",
        "metafirst",
        "help",
        "version",
    ],
);

static READLINK: Table = t(
    "efmnqsvz",
    &[
        "canonicalize",
        "canonicalize-existing",
        "canonicalize-missing",
        "no-newline",
        "quiet",
        "silent",
        "verbose",
        "zero",
        "help",
        "version",
    ],
);

static REALPATH: Table = t(
    "eLmPqsz",
    &[
        "canonicalize-existing",
        "canonicalize-missing",
        "logical",
        "physical",
        "quiet",
        "relative-to=",
        "relative-base=",
        "strip",
        "no-symlinks",
        "zero",
        "help",
        "version",
    ],
);

static BASENAME: Table = t("as=z", &["multiple", "suffix=", "zero", "help", "version"]);
static DIRNAME: Table = t("z", &["zero", "help", "version"]);
static WHICH: Table = t("as", &[]);
static PWD: Table = t("LP", &["logical", "physical", "help", "version"]);

static UNAME: Table = t(
    "asnrvmpio",
    &[
        "all",
        "kernel-name",
        "nodename",
        "kernel-release",
        "kernel-version",
        "machine",
        "processor",
        "hardware-platform",
        "operating-system",
        "help",
        "version",
    ],
);

static ID: Table = t(
    "agGnruzZ",
    &[
        "context", "group", "groups", "name", "real", "user", "zero", "help", "version",
    ],
);

/// `-s`/`--set` sets the clock.
static DATE: Table = t(
    "d=f<I?r<Rs!u",
    &[
        "date=",
        "debug",
        "file<",
        "iso-8601?",
        "resolution",
        "rfc-email",
        "rfc-3339=",
        "reference<",
        "set!",
        "universal",
        "utc",
        "help",
        "version",
    ],
);

static CMP: Table = t(
    "bi=ln=sv",
    &[
        "print-bytes",
        "ignore-initial=",
        "verbose",
        "bytes=",
        "quiet",
        "silent",
        "help",
        "version",
    ],
);
