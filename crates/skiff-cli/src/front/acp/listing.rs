//! `session/list`: skiff's saved sessions (the JSONL transcripts of `skiff sessions`), of one
//! workspace or of all, newest first, a page at a time.

use std::path::{Path, PathBuf};

use agent_client_protocol::v1::schema::{ListSessionsResponse, SessionId, SessionInfo};
use skiff_core::transcript::{self, SessionSummary};

use skiff_config::sessions::one_line;

/// Sessions per page.
const PAGE: usize = 100;

/// The workspace a transcript was written in (its lines' `cwd`).
fn transcript_cwd(path: &Path) -> Option<PathBuf> {
    use std::io::BufRead;
    let file = std::fs::File::open(path).ok()?;
    std::io::BufReader::new(file)
        .lines()
        .take(50)
        .map_while(Result::ok)
        .find_map(|line| {
            let v: serde_json::Value = serde_json::from_str(&line).ok()?;
            v.get("cwd")?.as_str().map(PathBuf::from)
        })
}

/// Every session of every workspace under `home`, newest first.
fn all_sessions(home: &Path) -> Vec<(SessionSummary, PathBuf)> {
    let Ok(projects) = std::fs::read_dir(home.join("projects")) else {
        return Vec::new();
    };
    let mut list: Vec<(SessionSummary, PathBuf)> = projects
        .filter_map(Result::ok)
        .filter_map(|p| std::fs::read_dir(p.path()).ok())
        .flatten()
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl") && p.is_file())
        .filter_map(|p| {
            let s = transcript::summarize_session(&p)?;
            (s.message_count > 0).then_some(s)
        })
        .filter_map(|s| transcript_cwd(&s.path).map(|cwd| (s, cwd)))
        .collect();
    list.sort_by(|(a, _), (b, _)| b.modified.cmp(&a.modified).then_with(|| a.id.cmp(&b.id)));
    list
}

/// One page of sessions: of the workspace `cwd` when given, else of all; `cursor` is where
/// the previous page stopped.
pub fn list(
    home: &Path,
    cwd: Option<&Path>,
    cursor: Option<&str>,
) -> Result<ListSessionsResponse, String> {
    let start = match cursor {
        Some(c) => c
            .parse::<usize>()
            .map_err(|_| format!("invalid cursor {c:?}"))?,
        None => 0,
    };
    let sessions: Vec<(SessionSummary, PathBuf)> = match cwd {
        Some(cwd) => {
            let canonical = std::fs::canonicalize(cwd).unwrap_or_else(|_| cwd.to_path_buf());
            transcript::list_sessions(home, &canonical)
                .into_iter()
                .map(|s| (s, canonical.clone()))
                .collect()
        }
        None => all_sessions(home),
    };
    let total = sessions.len();
    let page: Vec<SessionInfo> = sessions
        .into_iter()
        .skip(start)
        .take(PAGE)
        .map(|(s, cwd)| {
            SessionInfo::new(SessionId::new(s.id.as_str()), cwd)
                .title(s.first_prompt.as_deref().map(|p| one_line(p, 80)))
                .updated_at(s.modified_iso())
        })
        .collect();
    let next = (start + PAGE < total).then(|| (start + PAGE).to_string());
    Ok(ListSessionsResponse::new(page).next_cursor(next))
}
