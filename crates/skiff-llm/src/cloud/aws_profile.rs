//! The AWS shared configuration files: `~/.aws/config` (`[default]`, `[profile NAME]`,
//! `[sso-session NAME]`) and `~/.aws/credentials` (`[NAME]`), `AWS_CONFIG_FILE` and
//! `AWS_SHARED_CREDENTIALS_FILE` to move them; a profile's keys from both (the credentials file
//! wins).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::vars::Vars;

/// One section's keys.
pub(crate) type Section = HashMap<String, String>;

/// The sections of both files.
#[derive(Debug, Clone, Default)]
pub(crate) struct ProfileFiles {
    /// `[profile NAME]` / `[default]` of the config file, merged with `[NAME]` of the
    /// credentials file.
    pub profiles: HashMap<String, Section>,
    /// `[sso-session NAME]`.
    pub sso_sessions: HashMap<String, Section>,
    /// The files read (for messages).
    pub config_path: Option<PathBuf>,
    /// The credentials file.
    pub credentials_path: Option<PathBuf>,
}

impl ProfileFiles {
    /// Read both files (a missing file is empty).
    pub(crate) fn load(vars: &Vars) -> Self {
        let config_path = vars.path_or_home("AWS_CONFIG_FILE", ".aws/config");
        let credentials_path = vars.path_or_home("AWS_SHARED_CREDENTIALS_FILE", ".aws/credentials");
        let mut files = Self {
            config_path: config_path.clone(),
            credentials_path: credentials_path.clone(),
            ..Self::default()
        };
        if let Some(text) = config_path.as_deref().and_then(read) {
            for (name, keys) in parse_ini(&text) {
                let name = name.trim();
                if name == "default" {
                    files
                        .profiles
                        .entry("default".into())
                        .or_default()
                        .extend(keys);
                } else if let Some(p) = name.strip_prefix("profile ") {
                    files
                        .profiles
                        .entry(p.trim().to_owned())
                        .or_default()
                        .extend(keys);
                } else if let Some(s) = name.strip_prefix("sso-session ") {
                    files.sso_sessions.insert(s.trim().to_owned(), keys);
                }
            }
        }
        if let Some(text) = credentials_path.as_deref().and_then(read) {
            for (name, keys) in parse_ini(&text) {
                files
                    .profiles
                    .entry(name.trim().to_owned())
                    .or_default()
                    .extend(keys);
            }
        }
        files
    }

    /// Where a profile lives, for messages.
    pub(crate) fn describe(&self) -> String {
        let show = |p: &Option<PathBuf>| {
            p.as_ref()
                .map_or_else(|| "(no HOME)".to_owned(), |p| p.display().to_string())
        };
        format!(
            "{} and {}",
            show(&self.credentials_path),
            show(&self.config_path)
        )
    }
}

fn read(path: &Path) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

/// Sections of an INI file, in order. Indented lines (nested settings such as `s3 =`) and
/// comments are skipped.
pub(crate) fn parse_ini(text: &str) -> Vec<(String, Section)> {
    let mut out: Vec<(String, Section)> = Vec::new();
    for line in text.lines() {
        if line.starts_with([' ', '\t']) {
            continue;
        }
        let line = line.trim();
        if line.is_empty() || line.starts_with(['#', ';']) {
            continue;
        }
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            out.push((name.trim().to_owned(), Section::new()));
            continue;
        }
        if let (Some((_, section)), Some((k, v))) = (out.last_mut(), line.split_once('=')) {
            let v = v.trim();
            // An inline comment after whitespace.
            let v = v
                .find(" #")
                .or_else(|| v.find(" ;"))
                .map_or(v, |i| v[..i].trim_end());
            section.insert(k.trim().to_ascii_lowercase(), v.to_owned());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ini_sections_comments_and_nested_keys() {
        let text = "# c\n[default]\nregion = eu-west-1 # note\ns3 =\n  max_concurrent_requests = 2\n\
                    [profile dev]\nsso_session=corp\n; c\nAWS_Access_Key_Id = AK\n";
        let s = parse_ini(text);
        assert_eq!(s.len(), 2);
        assert_eq!(s[0].1["region"], "eu-west-1");
        assert_eq!(s[0].1["s3"], "");
        assert!(!s[0].1.contains_key("max_concurrent_requests"));
        assert_eq!(s[1].0, "profile dev");
        assert_eq!(s[1].1["aws_access_key_id"], "AK");
    }

    #[test]
    fn both_files_merge_with_the_credentials_file_winning() {
        let dir = tempfile_dir();
        std::fs::write(
            dir.join("config"),
            "[profile dev]\nregion = us-west-2\naws_access_key_id = FROM_CONFIG\n[sso-session corp]\nsso_region = us-east-1\n",
        )
        .unwrap();
        std::fs::write(
            dir.join("credentials"),
            "[dev]\naws_access_key_id = FROM_CREDS\n",
        )
        .unwrap();
        let vars = Vars::from_pairs(&[
            ("AWS_CONFIG_FILE", dir.join("config").to_str().unwrap()),
            (
                "AWS_SHARED_CREDENTIALS_FILE",
                dir.join("credentials").to_str().unwrap(),
            ),
        ]);
        let f = ProfileFiles::load(&vars);
        assert_eq!(f.profiles["dev"]["aws_access_key_id"], "FROM_CREDS");
        assert_eq!(f.profiles["dev"]["region"], "us-west-2");
        assert_eq!(f.sso_sessions["corp"]["sso_region"], "us-east-1");
        let _ = std::fs::remove_dir_all(dir);
    }

    fn tempfile_dir() -> PathBuf {
        let d = std::env::temp_dir().join(format!(
            "skiff-aws-profile-{}-{}",
            std::process::id(),
            fastrand::u64(..)
        ));
        std::fs::create_dir_all(&d).unwrap();
        d
    }
}
