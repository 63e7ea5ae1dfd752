//! Logging: `tracing` to `$SKIFF_HOME/logs/skiff.log.YYYY-MM-DD` (daily files, the last
//! [`KEPT_LOG_FILES`] kept), level from `SKIFF_LOG`; `--debug` mirrors to stderr. Each line is
//! one `write` to the file (opened for appending), made where the event happens: a run logs a
//! few lines at the default level, and a writer thread with its queue cost more at every start
//! (a thread, 160 KB of queue touched, a join at exit) than those writes. Logging never fails
//! startup. Secrets are never logged: credentials live in redacting types and no call site logs
//! headers or request bodies.

use std::path::Path;

use tracing_appender::rolling::{RollingFileAppender, Rotation};
use tracing_subscriber::EnvFilter;
use tracing_subscriber::Layer as _;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

use crate::args::Args;

/// Log files kept (one per day).
pub const KEPT_LOG_FILES: usize = 7;

/// The log file name prefix inside `logs/` (the date follows).
pub const LOG_FILE_PREFIX: &str = "skiff.log";

/// Targets of skiff's own crates (the `skiff` binary and the libraries).
const SKIFF_TARGETS: &[&str] = &[
    "skiff",
    "skiff_cli",
    "skiff_core",
    "skiff_llm",
    "skiff_tools",
    "skiff_mcp",
    "skiff_protocol",
];

/// Initialise logging from the arguments and the environment: the log directory is
/// `$SKIFF_HOME/logs` (or `~/.skiff/logs`).
pub fn init_from_args(args: &Args) {
    match skiff_config::settings::skiff_home() {
        Some(home) => init(&home, args.debug.as_deref()),
        None => init_at(None, args.debug.as_deref()),
    }
}

/// Initialise logging under `home/logs`. `debug`: `None` = no stderr mirror, `Some("")` = debug
/// for skiff's crates, `Some(filter)` = categories (`api,tools`, `!mcp`) or tracing directives.
pub fn init(home: &Path, debug: Option<&str>) {
    init_at(Some(home), debug);
}

fn init_at(home: Option<&Path>, debug: Option<&str>) {
    let skiff_log = std::env::var("SKIFF_LOG")
        .ok()
        .filter(|s| !s.trim().is_empty());
    let debug_directives = debug.map(debug_directives);
    let file_directives = match (&skiff_log, &debug_directives) {
        (Some(s), _) => level_directives(s),
        (None, Some(d)) => d.clone(),
        (None, None) => default_directives("info"),
    };

    let file_layer = match home.map(|h| open_appender(&h.join("logs"))) {
        Some(Ok(appender)) => Some(
            tracing_subscriber::fmt::layer()
                .with_ansi(false)
                .with_writer(appender)
                .with_filter(filter(&file_directives, "SKIFF_LOG")),
        ),
        Some(Err(message)) => {
            eprintln!("Warning: {message}; continuing without a log file");
            None
        }
        None => None,
    };
    let stderr_layer = debug_directives.map(|d| {
        tracing_subscriber::fmt::layer()
            .with_writer(std::io::stderr)
            .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
            .with_filter(filter(&d, "--debug"))
    });
    if file_layer.is_none() && stderr_layer.is_none() {
        return;
    }
    // A second initialisation (tests, library use) keeps the first subscriber.
    let _ = tracing_subscriber::registry()
        .with(file_layer)
        .with(stderr_layer)
        .try_init();
}

/// The daily appender in `dir` (created 0700 on Unix); an error says what could not be done.
fn open_appender(dir: &Path) -> Result<RollingFileAppender, String> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder
        .create(dir)
        .map_err(|e| format!("cannot create the log directory {}: {e}", dir.display()))?;
    RollingFileAppender::builder()
        .rotation(Rotation::DAILY)
        .filename_prefix(LOG_FILE_PREFIX)
        .max_log_files(KEPT_LOG_FILES)
        .build(dir)
        .map_err(|e| format!("cannot open a log file in {}: {e}", dir.display()))
}

/// An `EnvFilter` from directives; invalid ones fall back to the default with a warning.
fn filter(directives: &str, what: &str) -> EnvFilter {
    EnvFilter::try_new(directives).unwrap_or_else(|e| {
        eprintln!("Warning: invalid {what} filter `{directives}` ({e}); using the default");
        EnvFilter::new(default_directives("info"))
    })
}

/// `warn` for dependencies, `level` for skiff's crates.
fn default_directives(level: &str) -> String {
    let mut s = String::from("warn");
    for t in SKIFF_TARGETS {
        s.push_str(&format!(",{t}={level}"));
    }
    s
}

/// `SKIFF_LOG`: a bare level applies to skiff's crates only (dependencies stay at `warn`);
/// anything else is used as tracing directives as written.
fn level_directives(value: &str) -> String {
    let v = value.trim();
    match v.to_ascii_lowercase().as_str() {
        "trace" | "debug" | "info" | "warn" | "error" | "off" => default_directives(v),
        _ => v.to_owned(),
    }
}

/// `--debug` filter: empty = skiff's crates at debug; a comma list of categories
/// (`api`, `tools`, `mcp`, `core`, `cli`, or a crate name; `!name` excludes) = those at debug;
/// anything with `=` = tracing directives as written.
fn debug_directives(filter: &str) -> String {
    let f = filter.trim();
    if f.is_empty() {
        return default_directives("debug");
    }
    if f.contains('=') {
        return f.to_owned();
    }
    let words: Vec<&str> = f
        .split(',')
        .map(str::trim)
        .filter(|w| !w.is_empty())
        .collect();
    let (excluded, included): (Vec<&str>, Vec<&str>) =
        words.iter().partition(|w| w.starts_with('!'));
    let mut s = if included.is_empty() {
        default_directives("debug")
    } else {
        String::from("warn")
    };
    for w in included {
        for t in category_targets(w) {
            s.push_str(&format!(",{t}=debug"));
        }
    }
    for w in excluded {
        for t in category_targets(w.trim_start_matches('!')) {
            s.push_str(&format!(",{t}=off"));
        }
    }
    s
}

fn category_targets(word: &str) -> Vec<&str> {
    match word {
        "api" | "llm" => vec!["skiff_llm"],
        "tools" => vec!["skiff_tools"],
        "mcp" => vec!["skiff_mcp"],
        "core" | "agent" | "hooks" | "permissions" | "session" => vec!["skiff_core"],
        "cli" | "settings" => vec!["skiff", "skiff_cli"],
        other => vec![other],
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
    use super::*;

    #[test]
    fn skiff_log_levels_keep_dependencies_at_warn() {
        let d = level_directives("trace");
        assert!(d.starts_with("warn,"));
        assert!(d.contains("skiff_llm=trace"));
        assert_eq!(level_directives("hyper=debug"), "hyper=debug");
        for d in [d, default_directives("info")] {
            EnvFilter::try_new(&d).unwrap();
        }
    }

    #[test]
    fn debug_filters() {
        assert!(debug_directives("").contains("skiff_core=debug"));
        let d = debug_directives("api,tools");
        assert!(d.contains("skiff_llm=debug") && d.contains("skiff_tools=debug"));
        assert!(!d.contains("skiff_core"));
        let d = debug_directives("!mcp");
        assert!(d.contains("skiff_core=debug") && d.ends_with("skiff_mcp=off"));
        assert_eq!(debug_directives("skiff_llm=trace"), "skiff_llm=trace");
        for f in ["", "api,tools", "!mcp", "skiff_llm=trace"] {
            EnvFilter::try_new(debug_directives(f)).unwrap();
        }
    }

    #[test]
    fn debug_flag_forms() {
        use clap::Parser;
        let parse = |argv: &[&str]| {
            let mut a = Args::try_parse_from(argv).unwrap();
            a.normalize();
            (a.debug, a.prompt)
        };
        assert_eq!(parse(&["skiff", "-p", "hi"]), (None, Some("hi".into())));
        assert_eq!(
            parse(&["skiff", "--debug", "-p", "hi"]),
            (Some(String::new()), Some("hi".into()))
        );
        assert_eq!(
            parse(&["skiff", "--debug=api", "hi"]),
            (Some("api".into()), Some("hi".into()))
        );
        assert_eq!(
            parse(&["skiff", "--debug", "fix the bug"]),
            (Some(String::new()), Some("fix the bug".into()))
        );
    }

    #[test]
    fn appender_creates_the_log_dir_and_a_dated_file() {
        let dir = tempfile::tempdir().unwrap();
        let logs = dir.path().join("a/b/logs");
        let mut appender = open_appender(&logs).unwrap();
        std::io::Write::write_all(&mut appender, b"hello\n").unwrap();
        let names: Vec<String> = std::fs::read_dir(&logs)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        assert_eq!(names.len(), 1, "{names:?}");
        assert!(names[0].starts_with("skiff.log."), "{names:?}");
    }

    #[test]
    fn old_log_files_are_pruned() {
        let dir = tempfile::tempdir().unwrap();
        for day in 1..=10 {
            std::fs::write(dir.path().join(format!("skiff.log.2020-01-{day:02}")), "x").unwrap();
        }
        std::fs::write(dir.path().join("other.txt"), "keep").unwrap();
        drop(open_appender(dir.path()).unwrap());
        let logs = std::fs::read_dir(dir.path())
            .unwrap()
            .filter(|e| {
                let name = e.as_ref().unwrap().file_name();
                name.to_string_lossy().starts_with("skiff.log.")
            })
            .count();
        assert_eq!(logs, KEPT_LOG_FILES);
        assert!(dir.path().join("other.txt").exists());
    }

    #[test]
    fn an_unwritable_log_dir_is_an_error_not_a_panic() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("file");
        std::fs::write(&file, "x").unwrap();
        let err = open_appender(&file.join("logs")).unwrap_err();
        assert!(err.contains("cannot create the log directory"), "{err}");
    }
}
