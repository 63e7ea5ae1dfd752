//! `skiff sessions`: the sessions of this workspace, newest first.

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use anyhow::Context;
use skiff_config::sessions::one_line;
use skiff_core::transcript::{self, SessionSummary};

use crate::args::{Args, OutputFormat};

/// `skiff sessions`: the sessions of this workspace (`--cwd` or the current directory), newest
/// first: id, date, message count and the first prompt. `--output-format json` prints an array.
pub fn run_sessions(args: &Args, format: OutputFormat) -> anyhow::Result<ExitCode> {
    let cwd = match &args.cwd {
        Some(d) => d.clone(),
        None => std::env::current_dir().context("cannot read the current directory")?,
    };
    let cwd = std::fs::canonicalize(&cwd)
        .with_context(|| format!("the workspace directory {} does not exist", cwd.display()))?;
    let list = transcript::list_sessions(&crate::session::skiff_home()?, &cwd);
    let mut out = std::io::stdout().lock();
    let written = if format == OutputFormat::Text {
        write_sessions(&list, &cwd, &mut out)
    } else {
        write_sessions_json(&list, &mut out)
    };
    match written {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e.into()),
        _ => Ok(ExitCode::SUCCESS),
    }
}

/// The listing as a table.
pub fn write_sessions(
    list: &[SessionSummary],
    cwd: &Path,
    out: &mut impl Write,
) -> std::io::Result<()> {
    if list.is_empty() {
        return writeln!(out, "No sessions in {} yet.", cwd.display());
    }
    writeln!(
        out,
        "{:<36}  {:<20}  {:>8}  FIRST PROMPT",
        "ID", "DATE", "MESSAGES"
    )?;
    for s in list {
        writeln!(
            out,
            "{:<36}  {:<20}  {:>8}  {}",
            s.id,
            s.modified_iso(),
            s.message_count,
            one_line(s.first_prompt.as_deref().unwrap_or("(no prompt)"), 60)
        )?;
    }
    writeln!(
        out,
        "\nResume one with `skiff --resume ID`, or the newest with `skiff --continue`."
    )
}

/// The listing as a JSON array.
pub fn write_sessions_json(list: &[SessionSummary], out: &mut impl Write) -> std::io::Result<()> {
    let items: Vec<serde_json::Value> = list
        .iter()
        .map(|s| {
            serde_json::json!({
                "session_id": s.id,
                "path": s.path,
                "modified": s.modified_iso(),
                "message_count": s.message_count,
                "first_prompt": s.first_prompt,
            })
        })
        .collect();
    writeln!(out, "{}", serde_json::Value::Array(items))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use std::path::PathBuf;

    use super::*;

    #[test]
    fn listing_formats() {
        assert_eq!(one_line("fix\n  the   bug", 60), "fix the bug");
        assert_eq!(one_line("abcdef", 4), "abc…");
        let list = vec![SessionSummary {
            id: "c9d7e50d-a2d7-4cb9-b6f4-1b7ca93ab4c3".into(),
            path: PathBuf::from("/h/x.jsonl"),
            modified: std::time::UNIX_EPOCH,
            first_prompt: Some("say hi".into()),
            message_count: 4,
        }];
        let mut out = Vec::new();
        write_sessions(&list, Path::new("/w"), &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains("c9d7e50d-a2d7-4cb9-b6f4-1b7ca93ab4c3  1970-01-01T00:00:00Z"));
        assert!(text.contains("say hi"));
        let mut out = Vec::new();
        write_sessions_json(&list, &mut out).unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(v[0]["message_count"], 4);
        let mut out = Vec::new();
        write_sessions(&[], Path::new("/w"), &mut out).unwrap();
        assert!(String::from_utf8(out).unwrap().starts_with("No sessions"));
    }
}
