//! The environment the user's settings give the commands skiff runs (`env` in settings.json, as
//! Claude Code applies it): Bash commands, hooks and MCP stdio servers get these variables
//! under whatever skiff sets or removes itself, and never the names skiff keeps out of tools
//! (API keys and tokens).

use std::fmt;

/// Variables for the commands skiff runs. Values may be secrets: `Debug` shows names only.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct ExtraEnv {
    vars: Vec<(String, String)>,
}

impl fmt::Debug for ExtraEnv {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.vars.iter().map(|(k, _)| k))
            .finish()
    }
}

impl ExtraEnv {
    /// The variables `vars`, without the names in `secrets` (compared case-sensitively, as the
    /// environment is) and without names no process could carry (empty, or holding `=` or NUL).
    /// A name given twice keeps its last value.
    pub fn new(vars: impl IntoIterator<Item = (String, String)>, secrets: &[String]) -> Self {
        let mut out: Vec<(String, String)> = Vec::new();
        for (name, value) in vars {
            let usable = !name.is_empty()
                && !name.contains('=')
                && !name.contains('\0')
                && !value.contains('\0');
            if !usable || secrets.contains(&name) {
                continue;
            }
            out.retain(|(k, _)| *k != name);
            out.push((name, value));
        }
        Self { vars: out }
    }

    /// The variables, in the order given.
    pub fn vars(&self) -> &[(String, String)] {
        &self.vars
    }

    /// The value of `name`, when set here.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.vars
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.vars.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn secrets_and_impossible_names_are_left_out_and_debug_hides_values() {
        let secrets = vec!["ANTHROPIC_API_KEY".to_owned()];
        let env = ExtraEnv::new(
            vars(&[
                ("FOO", "1"),
                ("ANTHROPIC_API_KEY", "sk-secret"),
                ("", "x"),
                ("A=B", "x"),
                ("NUL", "a\0b"),
                ("FOO", "2"),
                ("anthropic_api_key", "kept: another name"),
            ]),
            &secrets,
        );
        assert_eq!(
            env.vars(),
            vars(&[("FOO", "2"), ("anthropic_api_key", "kept: another name")])
        );
        assert_eq!(env.get("FOO"), Some("2"));
        assert_eq!(env.get("ANTHROPIC_API_KEY"), None);
        let shown = format!("{env:?}");
        assert!(
            shown.contains("FOO") && !shown.contains("kept: another"),
            "{shown}"
        );
    }
}
