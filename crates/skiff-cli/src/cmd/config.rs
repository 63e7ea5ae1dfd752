//! `skiff config`: print the effective configuration, one key per line with its source.
//! Credentials are never printed, only whether they are set and where from.

use std::fmt::Write as _;
use std::io::Write as _;
use std::process::ExitCode;

use anyhow::Context;
use serde_json::Value;
use skiff_llm::RetryPolicy;

use crate::args::Args;
use skiff_config::settings::{FileState, Settings, Source, Sourced};

/// Variables the provider reads, shown with their source (secret ones redacted).
const PROVIDER_VARS: &[&str] = &[
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_BASE_URL",
    "ANTHROPIC_BETAS",
    "ANTHROPIC_CUSTOM_HEADERS",
    "SKIFF_STREAM_IDLE_TIMEOUT_MS",
];

/// Run `skiff config`: load the settings as a run would and print them to stdout.
pub fn run_config(args: &Args) -> anyhow::Result<ExitCode> {
    let cwd = match &args.cwd {
        Some(d) => d.clone(),
        None => std::env::current_dir().context("cannot read the current directory")?,
    };
    let cwd = std::fs::canonicalize(&cwd)
        .with_context(|| format!("the workspace directory {} does not exist", cwd.display()))?;
    let settings = crate::session::settings(args, &cwd)?;
    let text = render(&settings);
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .context("writing to stdout")?;
    Ok(ExitCode::SUCCESS)
}

/// Whether a variable's value must not be shown.
pub fn is_secret_name(name: &str) -> bool {
    let n = name.to_ascii_uppercase();
    n == "ANTHROPIC_CUSTOM_HEADERS"
        || [
            "KEY",
            "TOKEN",
            "SECRET",
            "PASSWORD",
            "PASSWD",
            "CREDENTIAL",
            "AUTH",
            "COOKIE",
        ]
        .iter()
        .any(|w| n.contains(w))
}

fn quoted(s: &str) -> String {
    Value::String(s.to_owned()).to_string()
}

/// One line of `skiff config`: `key = value  (source)note`.
struct Entry {
    key: String,
    value: String,
    source: Source,
    note: String,
}

/// The entries, in the order they are shown.
#[derive(Default)]
struct Entries(Vec<Entry>);

impl Entries {
    fn add(&mut self, key: &str, value: String, source: &Source, note: &str) {
        self.0.push(Entry {
            key: key.to_owned(),
            value,
            source: source.clone(),
            note: note.to_owned(),
        });
    }

    /// A setting with a value from some source.
    fn sourced<T: ToString>(&mut self, key: &str, v: &Sourced<T>) {
        self.add(key, v.value.to_string(), &v.source, "");
    }

    /// A setting that may be unset: its value, or what applies then.
    fn optional<T>(
        &mut self,
        key: &str,
        v: Option<&Sourced<T>>,
        show: impl Fn(&T) -> String,
        unset: &str,
    ) {
        match v {
            Some(v) => self.add(key, show(&v.value), &v.source, ""),
            None => self.add(key, unset.to_owned(), &Source::Default, ""),
        }
    }

    /// A list setting: one line per item, `[]` when empty.
    fn list<T>(&mut self, key: &str, items: &[Sourced<T>], show: impl Fn(&T) -> String) {
        if items.is_empty() {
            self.add(key, "[]".to_owned(), &Source::Default, "");
        }
        for item in items {
            self.add(key, show(&item.value), &item.source, "");
        }
    }
}

/// The configuration as text, one `key = value  (source)` per line.
pub fn render(s: &Settings) -> String {
    let mut out = String::from(
        "# key = value  (source); later sources win: default < user < project < local < --settings < env < flags\n",
    );
    render_files(&mut out, s);
    let mut e = Entries::default();
    model_entries(&mut e, s);
    permission_entries(&mut e, s);
    sandbox_entries(&mut e, s);
    environment_entries(&mut e, s);
    for entry in e.0 {
        let _ = writeln!(
            out,
            "{} = {}  ({}){}",
            entry.key, entry.value, entry.source, entry.note
        );
    }
    if let skiff_config::provider::Backend::Cloud(cloud) = skiff_config::provider::Backend::of(s) {
        render_cloud(&mut out, s, cloud);
    }
    out
}

/// The workspace, its trust and the files read.
fn render_files(out: &mut String, s: &Settings) {
    let _ = writeln!(out, "workspace = {}", s.cwd.display());
    let _ = writeln!(
        out,
        "workspace.trusted = {}",
        if s.trusted {
            "yes"
        } else {
            "no  (its settings' env, allow rules, hooks, extra directories and its .env are ignored; --trust)"
        }
    );
    for w in &s.trust_warnings {
        let _ = writeln!(out, "# {w}");
    }
    for f in s.files.iter().chain(&s.dotenv_files) {
        let state = match f.state {
            FileState::Loaded => "loaded",
            FileState::Missing => "not found",
            FileState::Skipped => "skipped",
        };
        let key = if f.label == ".env" {
            ".env".to_owned()
        } else {
            format!("settings.{}", f.label)
        };
        let _ = writeln!(out, "{key} = {}  [{state}]", f.path.display());
    }
}

/// The model, its limits, the provider and the context management.
fn model_entries(e: &mut Entries, s: &Settings) {
    let resolved = skiff_llm::resolve_alias(&s.model.value);
    let model = if resolved == s.model.value {
        quoted(&resolved)
    } else {
        format!("{} (alias {})", quoted(&resolved), quoted(&s.model.value))
    };
    e.add("model", model, &s.model.source, "");
    e.sourced("skiff.maxOutputTokens", &s.max_output_tokens);
    e.optional(
        "skiff.temperature",
        s.temperature.as_ref(),
        ToString::to_string,
        "the API's default",
    );
    e.sourced("skiff.maxToolResultChars", &s.max_tool_result_chars);
    let defaults = skiff_core::compaction::CompactionConfig::default();
    let threshold_default = match defaults.threshold {
        skiff_core::compaction::CompactionThreshold::Percent(p) => format!("\"{p}%\""),
        skiff_core::compaction::CompactionThreshold::Tokens(n) => n.to_string(),
    };
    e.optional(
        "skiff.maxConversationMessages",
        s.max_conversation_messages.as_ref(),
        ToString::to_string,
        "no cap",
    );
    let c = &s.compaction;
    e.optional(
        "skiff.compaction.strategy",
        c.strategy.as_ref(),
        ToString::to_string,
        "summarize",
    );
    e.optional(
        "skiff.compaction.threshold",
        c.threshold.as_ref(),
        |t| quoted(&t.to_string()),
        &format!("{threshold_default} of the context window"),
    );
    e.optional(
        "skiff.compaction.keepRecent",
        c.keep_recent.as_ref(),
        ToString::to_string,
        &defaults.keep_recent.to_string(),
    );
    e.optional(
        "skiff.maxTurns",
        s.max_turns.as_ref(),
        ToString::to_string,
        &format!(
            "{} in print mode, none in the REPL",
            skiff_config::DEFAULT_MAX_TURNS
        ),
    );
    e.sourced("skiff.promptCaching", &s.prompt_caching);
    e.optional(
        "skiff.retries",
        s.retries.as_ref(),
        ToString::to_string,
        &RetryPolicy::default().max_retries.to_string(),
    );
    e.add(
        "skiff.provider",
        quoted(&s.provider.value),
        &s.provider.source,
        "",
    );
    e.optional(
        "skiff.baseUrl",
        s.base_url.as_ref(),
        |u| quoted(&skiff_config::settings::redact_url(u)),
        "the provider's (ANTHROPIC_BASE_URL / OPENAI_BASE_URL, or its default)",
    );
    e.optional(
        "skiff.contextWindow",
        s.context_window.as_ref(),
        ToString::to_string,
        "the model's (200000 when unknown)",
    );
    e.sourced("skiff.compactPrompt", &s.compact_prompt);
    e.optional(
        "skiff.pricing",
        s.pricing.as_ref(),
        |p| {
            format!(
                "${} in / ${} out per million tokens",
                p.input_per_mtok, p.output_per_mtok
            )
        },
        "the model table's (unknown models: $0)",
    );
    e.sourced("skiff.textToolCalls", &s.text_tool_calls);
    e.optional(
        "skiff.smallModel",
        s.small_model.as_ref(),
        |m| quoted(m),
        "claude-haiku-4-5 on Anthropic, else the session's model",
    );
    e.list(
        "skiff.webFetch.allowPrivateHosts",
        &s.web_fetch_private_hosts,
        |h| quoted(h),
    );
}

/// The permission mode, rules and extra directories.
fn permission_entries(e: &mut Entries, s: &Settings) {
    let p = &s.permissions;
    e.add(
        "permissions.defaultMode",
        quoted(&p.mode.value),
        &p.mode.source,
        "",
    );
    e.list("permissions.allow", &p.allow, |r| quoted(r));
    e.list("permissions.deny", &p.deny, |r| quoted(r));
    e.list("permissions.ask", &p.ask, |r| quoted(r));
    e.list(
        "permissions.additionalDirectories",
        &p.additional_directories,
        |d| quoted(&d.display().to_string()),
    );
}

/// The sandbox's settings, and what this machine makes of them.
fn sandbox_entries(e: &mut Entries, s: &Settings) {
    let sandbox = skiff_config::sandbox_setup::sandbox_status_probed(s, None);
    let sb = &s.sandbox;
    e.add(
        "sandbox.mode",
        quoted(sb.mode.value.as_str()),
        &sb.mode.source,
        &format!("  [in effect: {}]", sandbox.summary()),
    );
    e.add(
        "sandbox.network",
        quoted(sb.network.value.as_str()),
        &sb.network.source,
        "",
    );
    for (key, list) in [
        ("sandbox.network.allowedDomains", &sb.allowed_domains),
        ("sandbox.network.allowUnixSockets", &sb.allow_unix_sockets),
        ("sandbox.filesystem.denyRead", &sb.deny_read),
    ] {
        for item in list {
            e.add(key, quoted(&item.value), &item.source, "");
        }
    }
    e.add(
        "sandbox.fallback",
        quoted(sb.fallback.value.as_str()),
        &sb.fallback.source,
        &format!("  [this kernel: {}]", sandbox.landlock),
    );
    let namespaces = match &sandbox.namespaces {
        Some(skiff_tools::sandbox::NamespaceSupport::Available) => "available".to_owned(),
        Some(skiff_tools::sandbox::NamespaceSupport::Unavailable(why)) => {
            format!("unavailable: {why}")
        }
        None => "not used".to_owned(),
    };
    e.add(
        "sandbox.layers",
        quoted(&sandbox.layers()),
        &sb.mode.source,
        &format!("  [namespaces: {namespaces}]"),
    );
    let auto_note = match (sb.auto_allow_bash.value, sandbox.contained()) {
        (true, true) => "  [Bash runs without approval; deny and ask rules still apply]",
        (true, false) if sandbox.enforced() => {
            "  [no effect: namespaces are not available, so the sandbox does not contain commands]"
        }
        (true, false) => "  [no effect: the filesystem sandbox is not enforced]",
        (false, _) => "  [Bash asks for approval as usual]",
    };
    e.add(
        "sandbox.autoAllowBashIfSandboxed",
        sb.auto_allow_bash.value.to_string(),
        &sb.auto_allow_bash.source,
        auto_note,
    );
}

/// The settings' env, hooks, the provider's variables, logs and ignored keys.
fn environment_entries(e: &mut Entries, s: &Settings) {
    for (name, v) in &s.env {
        let value = if is_secret_name(name) {
            "[set, redacted]".to_owned()
        } else {
            quoted(&v.value)
        };
        let note = match s.lookup.source(name) {
            Some(src) if src.origin_is_settings() => {
                if is_secret_name(name) {
                    "  [a secret: kept from the commands skiff runs]".to_owned()
                } else if is_skiff_var(name) {
                    String::new()
                } else {
                    "  [set for Bash, hooks and MCP servers]".to_owned()
                }
            }
            Some(src) => format!("  [overridden by {src}]"),
            None => "  [empty: ignored]".to_owned(),
        };
        e.add(&format!("env.{name}"), value, &v.source, &note);
    }
    for (event, groups) in &s.hooks {
        for g in groups {
            e.add(
                &format!("hooks.{event}"),
                g.value.to_string(),
                &g.source,
                "",
            );
        }
    }
    for (id, on) in &s.enabled_plugins {
        e.add(
            &format!("enabledPlugins.{id}"),
            on.value.to_string(),
            &on.source,
            "",
        );
    }
    if let Some(h) = &s.api_key_helper {
        e.add(
            "apiKeyHelper",
            quoted(&h.value),
            &h.source,
            "  [not supported: set ANTHROPIC_API_KEY instead]",
        );
    }
    for var in PROVIDER_VARS {
        let value = s.lookup.get(var);
        let source = s.lookup.source(var).unwrap_or(Source::Default);
        let shown = match (&value, *var) {
            (None, "ANTHROPIC_BASE_URL") => quoted(skiff_llm::DEFAULT_BASE_URL),
            (None, _) => "not set".to_owned(),
            (Some(_), v) if is_secret_name(v) => "[set, redacted]".to_owned(),
            (Some(v), "ANTHROPIC_BASE_URL") => quoted(&skiff_config::settings::redact_url(v)),
            (Some(v), _) => quoted(v),
        };
        e.add(var, shown, &source, "");
    }
    let (level, src) = match std::env::var("SKIFF_LOG")
        .ok()
        .filter(|v| !v.trim().is_empty())
    {
        Some(v) => (
            v,
            Source::Env {
                var: "SKIFF_LOG".into(),
                origin: skiff_config::settings::EnvOrigin::Process,
            },
        ),
        None => ("info".to_owned(), Source::Default),
    };
    match &s.skiff_home {
        Some(h) => e.add(
            "logs",
            format!(
                "{}/{}.YYYY-MM-DD (level {level})",
                h.join("logs").display(),
                crate::logging::LOG_FILE_PREFIX
            ),
            &src,
            "",
        ),
        None => e.add("logs", "off (no HOME or SKIFF_HOME)".to_owned(), &src, ""),
    }
    for k in &s.ignored {
        e.add("ignored", quoted(&k.value), &k.source, "");
    }
}

/// The cloud provider's lines: which cloud and why, region, project, endpoint, credential
/// source, default models, and the cloud's variables that are set (secrets redacted).
fn render_cloud(out: &mut String, s: &Settings, cloud: skiff_llm::cloud::Cloud) {
    let why = if s.provider.source == Source::Default {
        s.lookup
            .source(cloud.switch_var())
            .unwrap_or(Source::Default)
    } else {
        s.provider.source.clone()
    };
    let _ = writeln!(out, "cloud = {}  ({why})", quoted(cloud.title()));
    match skiff_config::provider::cloud_config(cloud, s) {
        Err(e) => {
            let _ = writeln!(out, "cloud.error = {}", quoted(&format!("{e:#}")));
        }
        Ok(cfg) => {
            let sum = cfg.summary();
            if let Some((region, from)) = &sum.region {
                let _ = writeln!(out, "cloud.region = {}  ({from})", quoted(region));
            }
            if let Some(p) = &sum.project {
                let _ = writeln!(out, "cloud.project = {}", quoted(p));
            }
            let from = sum
                .endpoint_var
                .and_then(|v| s.lookup.source(v))
                .map_or_else(|| "default".to_owned(), |src| src.to_string());
            let _ = writeln!(
                out,
                "cloud.endpoint = {}  ({from})",
                quoted(&skiff_config::settings::redact_url(&sum.endpoint))
            );
            let _ = writeln!(out, "cloud.credentials = {}", quoted(&sum.credential));
            let model = cfg.map_model(&skiff_llm::resolve_alias(&s.model.value));
            let _ = writeln!(
                out,
                "cloud.model = {}  ({})",
                quoted(&model),
                s.model.source
            );
            let small = s.small_model.as_ref().map_or_else(
                || sum.default_small_model.clone(),
                |m| cfg.map_model(&skiff_llm::resolve_alias(&m.value)),
            );
            let _ = writeln!(out, "cloud.smallModel = {}", quoted(&small));
        }
    }
    for var in cloud.variables() {
        let Some(value) = s.lookup.get(var) else {
            continue;
        };
        let source = s.lookup.source(var).unwrap_or(Source::Default);
        let shown = if is_secret_name(var) {
            "[set, redacted]".to_owned()
        } else {
            quoted(&skiff_config::settings::redact_url(&value))
        };
        let _ = writeln!(out, "{var} = {shown}  ({source})");
    }
}

/// Variables skiff itself reads from the lookup.
fn is_skiff_var(name: &str) -> bool {
    name.starts_with("ANTHROPIC_")
        || name.starts_with("SKIFF_")
        || name.starts_with("CLAUDE_CODE_")
        || name.starts_with("AWS_")
        || name.starts_with("AZURE_")
        || name.starts_with("GOOGLE_")
        || name.starts_with("VERTEX_REGION_")
        || matches!(
            name,
            "CLOUD_ML_REGION" | "GCLOUD_PROJECT" | "GCE_METADATA_HOST"
        )
        || matches!(
            name,
            "DISABLE_PROMPT_CACHING" | "CLAUDE_CODE_MAX_OUTPUT_TOKENS"
        )
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
    use super::*;

    #[test]
    fn secret_names_and_urls() {
        for n in [
            "ANTHROPIC_API_KEY",
            "GITHUB_TOKEN",
            "db_password",
            "ANTHROPIC_CUSTOM_HEADERS",
        ] {
            assert!(is_secret_name(n), "{n}");
        }
        for n in ["ANTHROPIC_BASE_URL", "FOO", "SKIFF_MAX_RETRIES"] {
            assert!(!is_secret_name(n), "{n}");
        }
        use skiff_config::settings::redact_url;
        assert_eq!(
            redact_url("https://u:pw@proxy.example/v1"),
            "https://[redacted]@proxy.example/v1"
        );
        assert_eq!(
            redact_url("http://127.0.0.1:9/x@y"),
            "http://127.0.0.1:9/x@y"
        );
    }
}
