//! `@` file completion: the workspace's files and directories (walked as ripgrep walks them:
//! `.gitignore` respected, hidden files left out) ranked by a fuzzy match on their path.
//! Walking and matching run off the runtime.

use std::path::Path;

use nucleo_matcher::pattern::{CaseMatching, Normalization, Pattern};
use nucleo_matcher::{Config, Matcher};

/// At most this many paths are indexed.
const MAX_PATHS: usize = 100_000;

/// The workspace's paths relative to `root` (directories end with `/`), shallow ones first.
pub fn walk(root: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let walker = ignore::WalkBuilder::new(root)
        .hidden(true)
        .git_ignore(true)
        .git_global(true)
        .git_exclude(true)
        .require_git(false)
        .build();
    for entry in walker.flatten() {
        if out.len() >= MAX_PATHS {
            break;
        }
        let Ok(rel) = entry.path().strip_prefix(root) else {
            continue;
        };
        if rel.as_os_str().is_empty() {
            continue;
        }
        let mut s = rel.to_string_lossy().into_owned();
        if entry.file_type().is_some_and(|t| t.is_dir()) {
            s.push('/');
        }
        out.push(s);
    }
    out.sort_by(|a, b| {
        let depth = |s: &str| s.trim_end_matches('/').matches('/').count();
        depth(a).cmp(&depth(b)).then_with(|| a.cmp(b))
    });
    out
}

/// The best `limit` paths for `query` (fuzzy; smart case): better scores first, then shorter
/// paths. An empty query lists the shallowest paths.
pub fn rank(paths: &[String], query: &str, limit: usize) -> Vec<String> {
    if query.is_empty() {
        return paths.iter().take(limit).cloned().collect();
    }
    let mut matcher = Matcher::new(Config::DEFAULT.match_paths());
    let pattern = Pattern::parse(query, CaseMatching::Smart, Normalization::Never);
    let mut found = pattern.match_list(paths.iter(), &mut matcher);
    found.sort_by(|(a, sa), (b, sb)| sb.cmp(sa).then_with(|| a.len().cmp(&b.len())));
    found
        .into_iter()
        .take(limit)
        .map(|(p, _)| p.clone())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gitignored_and_hidden_files_are_left_out_and_matches_rank() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("src/front")).unwrap();
        std::fs::create_dir_all(root.join("target/debug")).unwrap();
        std::fs::write(root.join(".gitignore"), "target/\n").unwrap();
        std::fs::write(root.join(".env"), "x").unwrap();
        std::fs::write(root.join("src/main.rs"), "").unwrap();
        std::fs::write(root.join("src/front/repl.rs"), "").unwrap();
        std::fs::write(root.join("target/debug/main.rs"), "").unwrap();
        let paths = walk(root);
        assert!(paths.contains(&"src/main.rs".to_owned()), "{paths:?}");
        assert!(paths.contains(&"src/front/".to_owned()), "{paths:?}");
        assert!(!paths.iter().any(|p| p.starts_with("target")), "{paths:?}");
        assert!(!paths.iter().any(|p| p.starts_with(".env")), "{paths:?}");
        assert_eq!(rank(&paths, "mainrs", 5), ["src/main.rs"]);
        assert_eq!(rank(&paths, "frrepl", 5)[0], "src/front/repl.rs");
        assert_eq!(rank(&paths, "", 1), ["src/"]);
    }
}
