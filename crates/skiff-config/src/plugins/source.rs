//! Where a marketplace comes from, as `skiff plugin marketplace add` takes it and
//! `known_marketplaces.json` records it (Claude Code's shapes): a local directory, a
//! `marketplace.json` file, a git URL (`https://…`, `ssh://…`, `git@host:path`, `file://…`, a
//! path ending in `.git`; `#ref` picks a branch or tag) or GitHub's `owner/repo`.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{ConfigError, Result};

/// A marketplace's origin.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "source", rename_all = "lowercase")]
pub enum MarketplaceSource {
    /// A local directory holding `.claude-plugin/marketplace.json`, read where it is.
    Directory {
        /// The directory, absolute.
        path: PathBuf,
    },
    /// A local `marketplace.json` file, read where it is.
    File {
        /// The file, absolute.
        path: PathBuf,
    },
    /// A git repository, cloned into skiff's home.
    Git {
        /// The clone URL.
        url: String,
        /// A branch or tag.
        #[serde(rename = "ref", default, skip_serializing_if = "Option::is_none")]
        git_ref: Option<String>,
    },
    /// A GitHub repository, cloned into skiff's home.
    Github {
        /// `owner/repo`.
        repo: String,
        /// A branch or tag.
        #[serde(rename = "ref", default, skip_serializing_if = "Option::is_none")]
        git_ref: Option<String>,
    },
}

impl MarketplaceSource {
    /// Understand what the user typed, relative to `cwd`.
    pub fn parse(input: &str, cwd: &Path) -> Result<Self> {
        let input = input.trim();
        if input.is_empty() {
            return Err(ConfigError::usage(
                "give a marketplace: a directory, a git URL or owner/repo",
            ));
        }
        let (base, git_ref) = match input.rsplit_once('#') {
            Some((b, r)) if !r.is_empty() && !b.is_empty() => (b, Some(r.to_owned())),
            _ => (input, None),
        };
        if is_git_url(base) {
            check_git_url(base)?;
            return Ok(Self::Git {
                url: base.to_owned(),
                git_ref,
            });
        }
        if base.starts_with("http://") || base.starts_with("https://") {
            return Err(ConfigError::usage(format!(
                "{input}: a marketplace.json served over HTTP is not supported; add the git \
                 repository that holds it (its URL ending in .git, or owner/repo for GitHub)"
            )));
        }
        let expanded = match base.strip_prefix("~/") {
            Some(rest) => std::env::var_os("HOME")
                .map(|h| PathBuf::from(h).join(rest))
                .unwrap_or_else(|| PathBuf::from(base)),
            None => PathBuf::from(base),
        };
        let path = crate::settings::absolute(cwd, &expanded);
        if path.is_dir() {
            let path = std::fs::canonicalize(&path).map_err(|e| ConfigError::read(&path, e))?;
            if path.join(".git").exists() && git_ref.is_some() {
                return Ok(Self::Git {
                    url: path.display().to_string(),
                    git_ref,
                });
            }
            return Ok(Self::Directory { path });
        }
        if path.is_file() {
            let path = std::fs::canonicalize(&path).map_err(|e| ConfigError::read(&path, e))?;
            return Ok(Self::File { path });
        }
        if is_github_repo(base) && !base.starts_with('.') {
            return Ok(Self::Github {
                repo: base.to_owned(),
                git_ref,
            });
        }
        Err(ConfigError::usage(format!(
            "{input}: not a directory, a marketplace.json file, a git URL or a GitHub owner/repo"
        )))
    }

    /// The clone URL and ref of a git marketplace.
    pub fn git(&self) -> Option<(String, Option<String>)> {
        match self {
            Self::Git { url, git_ref } => Some((url.clone(), git_ref.clone())),
            Self::Github { repo, git_ref } => Some((github_url(repo), git_ref.clone())),
            Self::Directory { .. } | Self::File { .. } => None,
        }
    }

    /// How `marketplace list` shows it.
    pub fn describe(&self) -> String {
        let with_ref = |s: String, r: &Option<String>| match r {
            Some(r) => format!("{s}#{r}"),
            None => s,
        };
        match self {
            Self::Directory { path } => format!("directory {}", path.display()),
            Self::File { path } => format!("file {}", path.display()),
            Self::Git { url, git_ref } => with_ref(format!("git {url}"), git_ref),
            Self::Github { repo, git_ref } => with_ref(format!("github {repo}"), git_ref),
        }
    }
}

/// Whether `s` is GitHub's `owner/repo`.
pub fn is_github_repo(s: &str) -> bool {
    let Some((owner, repo)) = s.split_once('/') else {
        return false;
    };
    let part = |p: &str| {
        !p.is_empty()
            && p.len() <= 100
            && !p.starts_with(['.', '-'])
            && p.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
    };
    part(owner) && part(repo)
}

/// The clone URL of GitHub's `owner/repo`.
pub fn github_url(repo: &str) -> String {
    format!("https://github.com/{}.git", repo.trim_end_matches(".git"))
}

/// Whether `s` looks like something `git clone` takes.
fn is_git_url(s: &str) -> bool {
    let scheme = [
        "https://",
        "http://",
        "ssh://",
        "git://",
        "file://",
        "git+ssh://",
    ]
    .iter()
    .any(|p| s.starts_with(p));
    (scheme && !(s.starts_with("http") && s.ends_with(".json")))
        || scp_like(s)
        || (s.ends_with(".git") && !s.contains("://"))
}

/// `user@host:path`.
fn scp_like(s: &str) -> bool {
    match s.split_once(':') {
        Some((left, right)) => {
            left.contains('@')
                && !left.contains('/')
                && !right.is_empty()
                && !right.starts_with("//")
        }
        None => false,
    }
}

/// Refuse what `git clone` must never be handed: options (`-…`), and its transports that run
/// programs (`ext::`, `fd::`).
pub fn check_git_url(url: &str) -> Result<()> {
    let bad = url.starts_with('-')
        || url.contains("::")
        || url.chars().any(char::is_control)
        || url.trim() != url;
    if bad {
        return Err(ConfigError::invalid(format!(
            "{url:?} is not a git URL skiff will clone"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn what_the_user_types() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path();
        std::fs::create_dir(cwd.join("mkt")).unwrap();
        std::fs::write(cwd.join("m.json"), "{}").unwrap();
        let real = std::fs::canonicalize(cwd).unwrap();
        assert_eq!(
            MarketplaceSource::parse("mkt", cwd).unwrap(),
            MarketplaceSource::Directory {
                path: real.join("mkt")
            }
        );
        assert_eq!(
            MarketplaceSource::parse("./m.json", cwd).unwrap(),
            MarketplaceSource::File {
                path: real.join("m.json")
            }
        );
        assert_eq!(
            MarketplaceSource::parse("anthropics/claude-code", cwd).unwrap(),
            MarketplaceSource::Github {
                repo: "anthropics/claude-code".into(),
                git_ref: None
            }
        );
        assert_eq!(
            MarketplaceSource::parse("file:///srv/m.git#v2", cwd).unwrap(),
            MarketplaceSource::Git {
                url: "file:///srv/m.git".into(),
                git_ref: Some("v2".into())
            }
        );
        for url in [
            "https://gitlab.com/t/p.git",
            "https://github.com/o/r",
            "git@github.com:o/r.git",
            "/srv/repo.git",
        ] {
            assert!(
                matches!(
                    MarketplaceSource::parse(url, cwd).unwrap(),
                    MarketplaceSource::Git { .. }
                ),
                "{url}"
            );
        }
        let e = MarketplaceSource::parse("https://example.com/marketplace.json", cwd).unwrap_err();
        assert!(e.to_string().contains("not supported"), "{e}");
        for bad in [
            "",
            "nothing-here",
            "./missing/dir",
            "-x.git",
            "ext::sh -c x.git",
        ] {
            assert!(MarketplaceSource::parse(bad, cwd).is_err(), "{bad}");
        }
    }

    #[test]
    fn records_use_claude_codes_shape() {
        let s = MarketplaceSource::Github {
            repo: "o/r".into(),
            git_ref: None,
        };
        assert_eq!(
            serde_json::to_value(&s).unwrap(),
            serde_json::json!({"source": "github", "repo": "o/r"})
        );
        let d: MarketplaceSource =
            serde_json::from_value(serde_json::json!({"source": "directory", "path": "/m"}))
                .unwrap();
        assert_eq!(d, MarketplaceSource::Directory { path: "/m".into() });
    }
}
