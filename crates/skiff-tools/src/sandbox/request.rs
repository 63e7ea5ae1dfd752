//! What the helper is asked to do: its arguments after `__sandbox`, parsed.

use std::ffi::OsString;
use std::path::PathBuf;

use super::plan::Plan;
use super::{NetworkPolicy, SandboxMode};

/// What the helper was asked to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct HelperRequest {
    pub(super) plan: Plan,
    pub(super) program: OsString,
    pub(super) args: Vec<OsString>,
}

impl HelperRequest {
    pub(super) fn parse(args: impl IntoIterator<Item = OsString>) -> Result<Self, String> {
        let mut args = args.into_iter();
        let mut plan = Plan {
            fs: SandboxMode::Off,
            network: NetworkPolicy::Allow,
            ..Plan::default()
        };
        let text = |v: Option<OsString>, flag: &str| -> Result<String, String> {
            v.and_then(|v| v.into_string().ok())
                .ok_or_else(|| format!("{flag} needs a value"))
        };
        loop {
            let Some(arg) = args.next() else {
                return Err("missing `-- PROGRAM [ARG]...`".to_owned());
            };
            match arg.to_str() {
                Some("--") => break,
                Some("--plan") => plan = Plan::from_arg(&text(args.next(), "--plan")?)?,
                Some("--fs") => plan.fs = text(args.next(), "--fs")?.parse()?,
                Some("--network") => plan.network = text(args.next(), "--network")?.parse()?,
                Some("--write") => {
                    let dir = args.next().ok_or("--write needs a directory")?;
                    plan.write.push(PathBuf::from(dir));
                }
                _ => return Err(format!("unknown argument {arg:?}")),
            }
        }
        let program = args.next().ok_or("missing the program to run after `--`")?;
        Ok(Self {
            plan,
            program,
            args: args.collect(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(words: &[&str]) -> Vec<OsString> {
        words.iter().map(OsString::from).collect()
    }

    #[test]
    fn helper_requests_parse() {
        let r = HelperRequest::parse(os(&[
            "--fs",
            "workspace-write",
            "--network",
            "deny",
            "--write",
            "/w",
            "--write",
            "/x",
            "--",
            "bash",
            "-c",
            "echo --fs",
        ]))
        .unwrap();
        assert_eq!(r.plan.fs, SandboxMode::WorkspaceWrite);
        assert_eq!(r.plan.network, NetworkPolicy::Deny);
        assert_eq!(r.plan.write, [PathBuf::from("/w"), PathBuf::from("/x")]);
        assert_eq!(r.program, "bash");
        assert_eq!(r.args, os(&["-c", "echo --fs"]));
        let plan = Plan {
            fs: SandboxMode::ReadOnly,
            network: NetworkPolicy::Proxy,
            ..Plan::default()
        };
        let r = HelperRequest::parse(os(&["--plan", &plan.to_arg(), "--", "true"])).unwrap();
        assert_eq!(r.plan, plan);
        for bad in [
            &["--fs", "nope", "--", "true"][..],
            &["--fs"],
            &["--bogus", "--", "true"],
            &["--fs", "off"],
            &["--"],
            &["--plan", "{", "--", "true"],
        ] {
            assert!(HelperRequest::parse(os(bad)).is_err(), "{bad:?}");
        }
    }
}
