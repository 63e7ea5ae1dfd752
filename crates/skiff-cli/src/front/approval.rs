//! Approval prompts of the REPL: what the call would do (a diff for Edit and Write), the
//! user's answer (yes / always / no, with optional feedback for the model), and saving the
//! allow rules "always" adds (the engine's `suggest_rules`) to `.skiff/settings.local.json`.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};
use skiff_core::event::{ApprovalAnswer, ApprovalRequest};

/// What the model is told when the user rejects a call without saying why.
pub const REJECTED: &str = "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file edit, the new_string was NOT written to the file). STOP what you are doing and wait for the user to tell you how to proceed.";

/// What the model is told when the user rejects a call and says how to proceed.
pub fn rejected_with(feedback: &str) -> String {
    format!(
        "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file edit, the new_string was NOT written to the file). To tell you how to proceed, the user said:\n{feedback}"
    )
}

/// The user's answer to an approval prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Choice {
    /// Run it once.
    Yes,
    /// Run it and add an allow rule so it is not asked again.
    Always,
    /// Don't run it; stop the turn.
    No,
    /// Don't run it; tell the model this.
    Feedback(String),
}

/// Read an answer line: `y`/`yes`, `a`/`always`, `n`/`no`/empty; anything else is feedback.
pub fn parse_choice(line: &str) -> Choice {
    let t = line.trim();
    match t.to_ascii_lowercase().as_str() {
        "y" | "yes" => Choice::Yes,
        "a" | "always" | "yes, always" | "don't ask again" => Choice::Always,
        "" | "n" | "no" => Choice::No,
        _ => Choice::Feedback(t.to_owned()),
    }
}

/// The approval answer for a rejection.
pub fn reject(feedback: Option<&str>) -> ApprovalAnswer {
    match feedback {
        Some(f) => ApprovalAnswer::Deny {
            message: rejected_with(f),
            interrupt: false,
        },
        None => ApprovalAnswer::Deny {
            message: REJECTED.to_owned(),
            interrupt: true,
        },
    }
}

/// Add `rule` to `permissions.allow` of `<cwd>/.skiff/settings.local.json`, keeping everything
/// else in the file. A file that is not a JSON object is left alone (an error).
pub fn persist_allow_rule(cwd: &Path, rule: &str) -> anyhow::Result<PathBuf> {
    persist_rule(cwd, "allow", rule)
}

/// Add `entry` to `sandbox.network.allowedDomains` of `<cwd>/.claude/settings.local.json`
/// (Claude Code's file and key), keeping everything else in the file.
pub fn persist_allowed_domain(cwd: &Path, entry: &str) -> anyhow::Result<PathBuf> {
    let dir = cwd.join(".claude");
    let path = dir.join("settings.local.json");
    let mut root = read_object(&path, &format!("sandbox.network.allowedDomains: {entry:?}"))?;
    let mut sandbox = match root.remove("sandbox") {
        Some(Value::Object(m)) => m,
        _ => Map::new(),
    };
    let mut network = match sandbox.remove("network") {
        Some(Value::Object(m)) => m,
        // The string form is the policy: kept as the object's `mode`.
        Some(Value::String(mode)) => Map::from_iter([("mode".to_owned(), Value::String(mode))]),
        _ => Map::new(),
    };
    let mut list = match network.remove("allowedDomains") {
        Some(Value::Array(a)) => a,
        _ => Vec::new(),
    };
    if !list.iter().any(|d| d.as_str() == Some(entry)) {
        list.push(Value::String(entry.to_owned()));
    }
    network.insert("allowedDomains".into(), Value::Array(list));
    sandbox.insert("network".into(), Value::Object(network));
    root.insert("sandbox".into(), Value::Object(sandbox));
    write_object(&dir, &path, root)
}

/// A settings file as a JSON object (empty when missing); `what` names the change for the
/// error when the file is not an object.
fn read_object(path: &Path, what: &str) -> anyhow::Result<Map<String, Value>> {
    match std::fs::read_to_string(path) {
        Ok(text) if text.trim().is_empty() => Ok(Map::new()),
        Ok(text) => match serde_json::from_str::<Value>(&text) {
            Ok(Value::Object(m)) => Ok(m),
            _ => anyhow::bail!(
                "{} is not a JSON object; not changed (add {what} by hand)",
                path.display()
            ),
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Map::new()),
        Err(e) => anyhow::bail!("cannot read {}: {e}", path.display()),
    }
}

/// Write a settings object atomically; a command's sandbox check leaves the file alone.
fn write_object(dir: &Path, path: &Path, root: Map<String, Value>) -> anyhow::Result<PathBuf> {
    std::fs::create_dir_all(dir)?;
    skiff_tools::protected::record_own_write(dir);
    let text = serde_json::to_string_pretty(&Value::Object(root))?;
    let tmp = dir.join(format!(
        ".{}.tmp",
        path.file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("settings")
    ));
    std::fs::write(&tmp, format!("{text}\n"))?;
    std::fs::rename(&tmp, path)?;
    Ok(path.to_path_buf())
}

/// Add `rule` to `permissions.<list>` (`allow`, `deny` or `ask`) of
/// `<cwd>/.skiff/settings.local.json`, keeping everything else in the file.
pub fn persist_rule(cwd: &Path, list: &str, rule: &str) -> anyhow::Result<PathBuf> {
    let dir = cwd.join(".skiff");
    let path = dir.join("settings.local.json");
    let mut root = read_object(&path, &format!("{rule:?} to permissions.{list}"))?;
    let mut permissions = match root.remove("permissions") {
        Some(Value::Object(m)) => m,
        _ => Map::new(),
    };
    let mut rules = match permissions.remove(list) {
        Some(Value::Array(a)) => a,
        _ => Vec::new(),
    };
    if !rules.iter().any(|r| r.as_str() == Some(rule)) {
        rules.push(Value::String(rule.to_owned()));
    }
    permissions.insert(list.to_owned(), Value::Array(rules));
    root.insert("permissions".into(), Value::Object(permissions));
    write_object(&dir, &path, root)
}

/// Lines shown above the question: for Edit and Write a unified diff of the change (at most
/// `max_lines`), for Bash the whole command.
pub fn preview(a: &ApprovalRequest, cwd: &Path, max_lines: usize) -> Vec<String> {
    let s = |k: &str| a.input.get(k).and_then(Value::as_str);
    let (old, new, path) = match a.tool_name.as_str() {
        "Edit" => (
            s("old_string").unwrap_or("").to_owned(),
            s("new_string").unwrap_or("").to_owned(),
            s("file_path"),
        ),
        "Write" => {
            let path = s("file_path");
            let old = path
                .map(|p| cwd.join(p))
                .filter(|p| p.is_file())
                .and_then(|p| std::fs::read_to_string(p).ok())
                .unwrap_or_default();
            (old, s("content").unwrap_or("").to_owned(), path)
        }
        "Bash" => {
            return s("command")
                .map(|c| {
                    c.lines()
                        .take(max_lines)
                        .map(|l| format!("  {l}"))
                        .collect()
                })
                .unwrap_or_default();
        }
        _ => return Vec::new(),
    };
    let diff = similar::TextDiff::from_lines(&old, &new);
    let name = path.unwrap_or("file");
    let text = diff
        .unified_diff()
        .context_radius(2)
        .header(name, name)
        .to_string();
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    if lines.len() > max_lines {
        let more = lines.len() - max_lines;
        lines.truncate(max_lines);
        lines.push(format!("… {more} more lines"));
    }
    lines
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn req(tool: &str, input: Value) -> ApprovalRequest {
        ApprovalRequest {
            tool_name: tool.into(),
            input,
            tool_use_id: "t".into(),
            reason: String::new(),
        }
    }

    #[test]
    fn choices() {
        assert_eq!(parse_choice("Y"), Choice::Yes);
        assert_eq!(parse_choice(" always "), Choice::Always);
        assert_eq!(parse_choice(""), Choice::No);
        assert_eq!(
            parse_choice("use the other file"),
            Choice::Feedback("use the other file".into())
        );
        let ApprovalAnswer::Deny { message, interrupt } = reject(Some("try B")) else {
            panic!()
        };
        assert!(message.ends_with("the user said:\ntry B") && !interrupt);
        assert!(matches!(
            reject(None),
            ApprovalAnswer::Deny {
                interrupt: true,
                ..
            }
        ));
    }

    #[test]
    fn the_rule_is_added_to_the_local_settings_keeping_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join(".skiff")).unwrap();
        std::fs::write(
            dir.path().join(".skiff/settings.local.json"),
            r#"{"model":"x","permissions":{"allow":["Read"],"deny":["WebFetch"]}}"#,
        )
        .unwrap();
        let path = persist_allow_rule(dir.path(), "Bash(ls)").unwrap();
        persist_allow_rule(dir.path(), "Bash(ls)").unwrap();
        let v: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        assert_eq!(v["model"], "x");
        assert_eq!(v["permissions"]["allow"], json!(["Read", "Bash(ls)"]));
        assert_eq!(v["permissions"]["deny"], json!(["WebFetch"]));
        std::fs::write(dir.path().join(".skiff/settings.local.json"), "not json").unwrap();
        assert!(persist_allow_rule(dir.path(), "Bash(ls)").is_err());
        assert_eq!(
            std::fs::read_to_string(dir.path().join(".skiff/settings.local.json")).unwrap(),
            "not json"
        );
    }

    #[test]
    fn edit_previews_are_diffs() {
        let lines = preview(
            &req(
                "Edit",
                json!({"file_path":"a.rs","old_string":"let x = 1;\n","new_string":"let x = 2;\n"}),
            ),
            Path::new("/nonexistent"),
            40,
        );
        assert!(lines.iter().any(|l| l == "-let x = 1;"), "{lines:?}");
        assert!(lines.iter().any(|l| l == "+let x = 2;"), "{lines:?}");
    }

    #[test]
    fn network_approvals_save_allowed_domains() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path();
        let entry = |host: &str, port: u64| {
            skiff_core::permissions::network::domain_entry(
                &json!({"host": host, "port": port, "command": "curl x"}),
            )
        };
        assert_eq!(entry("registry.npmjs.org", 443), "registry.npmjs.org");
        assert_eq!(entry("localhost", 5432), "localhost:5432");
        assert_eq!(entry("::1", 80), "[::1]:80");
        // The string form of the policy survives as `mode`; other keys are kept.
        std::fs::create_dir_all(cwd.join(".claude")).unwrap();
        std::fs::write(
            cwd.join(".claude/settings.local.json"),
            r#"{"model": "x", "sandbox": {"network": "proxy"}}"#,
        )
        .unwrap();
        let path = persist_allowed_domain(cwd, "github.com").unwrap();
        persist_allowed_domain(cwd, "github.com").unwrap();
        persist_allowed_domain(cwd, "localhost:5432").unwrap();
        let v: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        assert_eq!(
            v,
            json!({"model": "x", "sandbox": {"network": {"mode": "proxy",
                   "allowedDomains": ["github.com", "localhost:5432"]}}})
        );
    }
}
