//! The status line: model, permission mode, context used (% of the window), session cost and
//! background commands; or, with Claude Code's `statusLine` setting, the first line its command
//! prints, fed the same JSON on stdin as Claude Code feeds it.

use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use ratatui_core::style::{Color, Modifier, Style};
use ratatui_core::text::{Line, Span};
use serde_json::{Value, json};
use skiff_core::PermissionMode;
use skiff_tools::background::{Shell, ShellState};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt};

/// How long a `statusLine` command may take.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(3);

/// What the status line shows.
#[derive(Debug, Clone, Default)]
pub struct StatusInfo {
    /// The model of the next request.
    pub model: String,
    /// The permission mode.
    pub mode: PermissionMode,
    /// The model's context window, when known.
    pub context_window: Option<u64>,
    /// Tokens of the context at the last model call.
    pub context_tokens: u64,
    /// The session's cost so far.
    pub cost_usd: f64,
    /// The model runs on this machine (no cost).
    pub local: bool,
    /// The session's background commands.
    pub background: Vec<Arc<Shell>>,
    /// Lines added and removed by edits this session.
    pub lines_added: usize,
    /// Lines removed.
    pub lines_removed: usize,
    /// The `statusLine` command's line, replacing the built-in one.
    pub custom: Option<String>,
}

/// The mode as the status line names it, and its colour.
pub fn mode_label(mode: PermissionMode) -> (&'static str, Option<Color>) {
    match mode {
        PermissionMode::Default => ("default mode", None),
        PermissionMode::AcceptEdits => ("⏵⏵ accept edits", Some(Color::Magenta)),
        PermissionMode::Plan => ("⏸ plan mode", Some(Color::Cyan)),
        PermissionMode::BypassPermissions => ("⚠ bypass permissions", Some(Color::Red)),
        PermissionMode::DontAsk => ("don't ask", Some(Color::Yellow)),
    }
}

/// The next mode of Shift+Tab: default → acceptEdits → plan → default (bypass when the session
/// started with it).
pub fn next_mode(mode: PermissionMode, bypass_allowed: bool) -> PermissionMode {
    match mode {
        PermissionMode::Default => PermissionMode::AcceptEdits,
        PermissionMode::AcceptEdits => PermissionMode::Plan,
        PermissionMode::Plan if bypass_allowed => PermissionMode::BypassPermissions,
        _ => PermissionMode::Default,
    }
}

impl StatusInfo {
    /// Background commands still running.
    pub fn running_background(&self) -> usize {
        self.background
            .iter()
            .filter(|s| s.state() == ShellState::Running)
            .count()
    }

    /// The percentage of the context window used, when known.
    pub fn context_percent(&self) -> Option<u64> {
        let window = self.context_window.filter(|w| *w > 0)?;
        Some((self.context_tokens * 100 / window).min(100))
    }

    /// The status line at `cols` columns.
    pub fn line(&self, cols: usize) -> Line<'static> {
        let dim = Style::new().add_modifier(Modifier::DIM);
        if let Some(custom) = &self.custom {
            // Its colours kept; cut to the width.
            let line = crate::term::ansi::parse_sgr(custom);
            return crate::term::wrap::wrap_line(&line, cols.max(1), &[])
                .into_iter()
                .next()
                .unwrap_or_default();
        }
        let (mode, color) = mode_label(self.mode);
        let mode_style = match color {
            Some(c) => Style::new().fg(c),
            None => dim,
        };
        // What is shown, in order, each with how much it matters (0 most): at narrow widths
        // the least important parts go first, whole.
        let mut items: Vec<(u8, String)> = vec![(4, self.model.clone())];
        if let Some(p) = self.context_percent() {
            items.push((1, format!("ctx {p}%")));
        }
        if !self.local {
            items.push((3, format!("${:.2}", self.cost_usd)));
        }
        let bg = self.running_background();
        if bg > 0 {
            items.push((2, format!("{bg} background")));
        }
        items.push((5, "shift+tab to cycle".to_owned()));
        let width = |items: &[(u8, String)]| {
            crate::term::wrap::width(mode)
                + items
                    .iter()
                    .map(|(_, t)| 3 + crate::term::wrap::width(t))
                    .sum::<usize>()
        };
        while width(&items) > cols {
            let Some(least) = items
                .iter()
                .enumerate()
                .max_by_key(|(_, (p, _))| *p)
                .map(|(i, _)| i)
            else {
                break;
            };
            items.remove(least);
        }
        let mode: String = if crate::term::wrap::width(mode) > cols {
            mode.chars().take(cols).collect()
        } else {
            mode.to_owned()
        };
        let mut out = vec![Span::styled(mode, mode_style)];
        for (_, text) in items {
            out.push(Span::styled(" · ", dim));
            out.push(Span::styled(text, dim));
        }
        Line::from(out)
    }

    /// The JSON Claude Code feeds a `statusLine` command.
    pub fn command_input(&self, session: &SessionFacts) -> Value {
        json!({
            "hook_event_name": "Status",
            "session_id": session.session_id,
            "transcript_path": session.transcript.as_ref().map(|p| p.display().to_string()),
            "cwd": session.cwd.display().to_string(),
            "model": {"id": self.model, "display_name": self.model},
            "workspace": {
                "current_dir": session.cwd.display().to_string(),
                "project_dir": session.cwd.display().to_string(),
            },
            "version": env!("CARGO_PKG_VERSION"),
            "output_style": {"name": "default"},
            "permission_mode": self.mode.as_str(),
            "cost": {
                "total_cost_usd": self.cost_usd,
                "total_duration_ms": session.started.elapsed().as_millis() as u64,
                "total_api_duration_ms": 0,
                "total_lines_added": self.lines_added,
                "total_lines_removed": self.lines_removed,
            },
            "context_window": {
                "total_input_tokens": self.context_tokens,
                "context_window_size": self.context_window,
                "used_percentage": self.context_percent(),
            },
            "exceeds_200k_tokens": self.context_tokens > 200_000,
        })
    }
}

/// What the `statusLine` input says about the session.
#[derive(Debug, Clone)]
pub struct SessionFacts {
    /// Session id.
    pub session_id: String,
    /// Its transcript.
    pub transcript: Option<PathBuf>,
    /// The workspace.
    pub cwd: PathBuf,
    /// When the UI started.
    pub started: std::time::Instant,
}

/// Run a `statusLine` command with `input` on stdin in `cwd`: the first line it prints (None
/// when it fails, prints nothing or takes too long).
pub async fn run_command(command: &str, input: Value, cwd: PathBuf) -> Option<String> {
    let mut child = tokio::process::Command::new("sh")
        .arg("-c")
        .arg(command)
        .current_dir(cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| tracing::warn!(error = %e, "cannot run the statusLine command"))
        .ok()?;
    let mut stdin = child.stdin.take()?;
    let stdout = child.stdout.take()?;
    let read = async move {
        let _ = stdin.write_all(input.to_string().as_bytes()).await;
        drop(stdin);
        let mut lines = tokio::io::BufReader::new(stdout).lines();
        lines.next_line().await.ok().flatten()
    };
    let line = tokio::time::timeout(COMMAND_TIMEOUT, read)
        .await
        .ok()
        .flatten();
    let _ = child.start_kill();
    // Shown through `ansi::parse_sgr`: colours kept, other control sequences dropped.
    let line = line?.trim_end().to_owned();
    (!crate::term::wrap::plain(&crate::term::ansi::parse_sgr(&line))
        .trim()
        .is_empty())
    .then_some(line)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::term::wrap::plain;

    #[test]
    fn the_line_shows_mode_model_context_and_cost() {
        let s = StatusInfo {
            model: "claude-sonnet-4-5".into(),
            mode: PermissionMode::AcceptEdits,
            context_window: Some(200_000),
            context_tokens: 50_000,
            cost_usd: 0.1234,
            ..Default::default()
        };
        assert_eq!(
            plain(&s.line(120)),
            "⏵⏵ accept edits · claude-sonnet-4-5 · ctx 25% · $0.12 · shift+tab to cycle"
        );
        assert!(crate::term::wrap::line_width(&s.line(40)) <= 40);
        assert_eq!(plain(&s.line(40)), "⏵⏵ accept edits · ctx 25% · $0.12");
        let custom = StatusInfo {
            custom: Some("\x1b[31mred\x1b[0m and plain, cut at the width".into()),
            ..Default::default()
        };
        assert_eq!(plain(&custom.line(14)), "red and plain,");
        assert_eq!(
            next_mode(PermissionMode::Plan, false),
            PermissionMode::Default
        );
        assert_eq!(
            next_mode(PermissionMode::Default, false),
            PermissionMode::AcceptEdits
        );
    }

    #[tokio::test]
    async fn a_status_line_command_gets_the_json_and_its_first_line_is_shown() {
        let dir = tempfile::tempdir().unwrap();
        let line = run_command(
            r#"read -r j; echo "[$(echo "$j" | grep -o '"permission_mode":"[a-zA-Z]*"')]"; echo second"#,
            json!({"permission_mode": "plan"}),
            dir.path().to_path_buf(),
        )
        .await;
        assert_eq!(line.as_deref(), Some(r#"["permission_mode":"plan"]"#));
        assert_eq!(
            run_command("exit 1", json!({}), dir.path().to_path_buf()).await,
            None
        );
    }
}
