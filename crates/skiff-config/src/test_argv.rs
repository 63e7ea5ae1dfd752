//! Test-only: the command line's flags that the unit tests use, parsed into [`Overrides`]
//! (the binary's own parser lives in skiff-cli).

#![allow(clippy::panic)]

use std::path::PathBuf;

use crate::Overrides;

/// Parse `argv` (without the program name). Panics on a flag this helper does not know.
pub(crate) fn overrides(argv: &[&str]) -> Overrides {
    let mut o = Overrides::default();
    let mut it = argv.iter().copied();
    while let Some(word) = it.next() {
        // `--flag=value` or `--flag value`.
        let (flag, mut inline) = match word.split_once('=') {
            Some((f, v)) => (f, Some(v.to_owned())),
            None => (word, None),
        };
        let mut value = || {
            inline.take().unwrap_or_else(|| {
                it.next()
                    .unwrap_or_else(|| panic!("{flag} needs a value"))
                    .to_owned()
            })
        };
        match flag {
            "--add-dir" => o.add_dirs.push(PathBuf::from(value())),
            "--dangerously-skip-permissions" => o.dangerously_skip_permissions = true,
            "--max-tokens" => o.max_tokens = Some(number(flag, &value())),
            "--max-turns" => o.max_turns = Some(number(flag, &value())),
            "--mcp-config" => o.mcp_config.push(value()),
            "--model" => o.model = Some(value()),
            "--permission-mode" => o.permission_mode = Some(value()),
            "--setting-sources" => o.setting_sources = Some(value()),
            "--settings" => o.settings = Some(value()),
            "--strict-mcp-config" => o.strict_mcp_config = true,
            "--trust" => o.trust = true,
            "--allowedTools" => o.allowed_tools.extend(rules(&value())),
            "--disallowedTools" => o.disallowed_tools.extend(rules(&value())),
            "--provider" => o.provider = Some(value()),
            "--base-url" => o.base_url = Some(value()),
            other => panic!("test_argv does not know {other}"),
        }
    }
    o
}

/// Rules separated by commas or spaces outside parentheses, like the command line's.
fn rules(list: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut depth = 0usize;
    for c in list.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            ',' | ' ' if depth == 0 => {
                if !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

fn number(flag: &str, v: &str) -> u32 {
    v.parse()
        .unwrap_or_else(|_| panic!("{flag}: not a number: {v}"))
}
