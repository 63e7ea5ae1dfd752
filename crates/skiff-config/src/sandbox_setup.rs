//! The Bash sandbox of a session, from the settings: what this machine can enforce of it, the
//! session's [`SandboxRuntime`] (namespace probe, proxy, allowed domains, what commands cannot
//! read), the rule that asks before leaving it, and what `/sandbox` shows.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use skiff_core::frames::{LateInit, LateInitFields};
use skiff_core::permissions::{Rule, RuleKind, RuleOrigin, RuleSet};
use skiff_tools::SandboxStatus;
use skiff_tools::sandbox::{SandboxConfig, SandboxRuntime};

use crate::error::{ConfigError, Result};
use crate::settings::Settings;

/// The name of the helper program installed beside skiff.
pub const HELPER_NAME: &str = "skiff-sandbox";

/// The sandbox of one session.
pub struct SessionSandbox {
    /// What the settings ask for, as this machine can enforce it (namespaces not probed yet).
    pub status: SandboxStatus,
    /// The helper and the session's runtime, when commands go through the helper.
    pub runtime: Option<(PathBuf, Arc<SandboxRuntime>)>,
    /// What the Bash tool gets.
    pub config: Option<SandboxConfig>,
}

impl SessionSandbox {
    /// Decide the sandbox for `settings` in `cwd` (writing under `roots`), starting the
    /// namespace probe in the background; problems go to `warnings`.
    pub fn new(
        settings: &Settings,
        cwd: &Path,
        roots: Vec<PathBuf>,
        helper: Option<&Path>,
        warnings: &mut Vec<String>,
    ) -> Result<Self> {
        let status = sandbox_status(settings);
        warnings.extend(status.warning.clone());
        let runtime = if status.applies() {
            let helper = helper
                .map(Path::to_path_buf)
                .or_else(default_helper)
                .ok_or_else(|| {
                    ConfigError::invalid(
                        "cannot find the Bash sandbox's helper (skiff-sandbox) nor this program's \
                         own executable (use --sandbox off)",
                    )
                })?;
            let runtime = SandboxRuntime::new(
                helper.clone(),
                &status,
                runtime_settings(settings, cwd),
                roots,
                None,
            );
            warnings.extend(runtime.problems().iter().map(|p| format!("Warning: {p}")));
            Some((helper, runtime))
        } else {
            None
        };
        let config = runtime
            .as_ref()
            .and_then(|(helper, runtime)| status.config(helper.clone(), Some(Arc::clone(runtime))));
        Ok(Self {
            status,
            runtime,
            config,
        })
    }

    /// A call that asks to leave the sandbox always asks: the rule that says so.
    pub fn add_rules(&self, rules: &mut RuleSet, cwd: &Path) {
        if self.config.is_none() {
            return;
        }
        match Rule::parse("Bash(dangerouslyDisableSandbox:true)", &RuleOrigin::at(cwd)) {
            Ok(rule) => rules.push(RuleKind::Ask, rule),
            Err(e) => tracing::warn!(error = %e, "cannot add the sandbox's ask rule"),
        }
    }

    /// The status with the probe's answer (waited for: it started with the session's set-up
    /// and has usually come by now); a warning when namespaces are missing.
    pub fn probed_status(&self, warnings: &mut Vec<String>) -> SandboxStatus {
        match &self.runtime {
            Some((_, runtime)) => with_probe(&self.status, runtime.probe(), warnings),
            None => self.status.clone(),
        }
    }

    /// While the probe has not answered: the `sandbox` field of `system/init` as it will be
    /// once it has, for the frame to wait for instead of the session's set-up (the first
    /// request goes out meanwhile); the probe's warning goes to `warn` then. `None` when
    /// the answer is known (or no probe runs): [`SessionSandbox::probed_status`] has it at once.
    pub fn late_status(&self, warn: LateWarnings) -> Option<LateInitFields> {
        let (_, runtime) = self.runtime.as_ref()?;
        if runtime.probe().get().is_some() {
            return None;
        }
        Some(LateInitFields(Arc::new(LateSandboxStatus {
            status: self.status.clone(),
            probe: Arc::clone(runtime.probe()),
            warn,
            warned: std::sync::Once::new(),
        })))
    }

    /// What `/sandbox` shows.
    pub fn text(&self, settings: &Settings, cwd: &Path) -> SandboxText {
        SandboxText {
            status: self.status.clone(),
            probe: self.runtime.as_ref().map(|(_, r)| Arc::clone(r.probe())),
            auto_allow: settings.sandbox.auto_allow_bash.value,
            cwd: cwd.to_path_buf(),
            domains: settings
                .sandbox
                .allowed_domains
                .iter()
                .map(|d| d.value.clone())
                .collect(),
        }
    }
}

/// Where warnings that come after the session's set-up go (see [`SessionSandbox::late_status`]).
pub type LateWarnings = Arc<dyn Fn(&str) + Send + Sync>;

/// `status` with `probe`'s answer (waited for); a warning when namespaces are missing where
/// the sandbox is enforced.
fn with_probe(
    status: &SandboxStatus,
    probe: &skiff_tools::sandbox::Probe,
    warnings: &mut Vec<String>,
) -> SandboxStatus {
    let shown = status.clone().with_namespaces(probe.wait_blocking());
    if let Some(skiff_tools::sandbox::NamespaceSupport::Unavailable(why)) = &shown.namespaces
        && shown.enforced()
    {
        warnings.push(format!(
            "Warning: the Bash sandbox cannot give commands namespaces of their own here \
             ({why}); they run under Landlock only, which does not contain them, so Bash \
             commands ask for approval."
        ));
    }
    shown
}

/// The `sandbox` field of `system/init` once the probe has answered.
struct LateSandboxStatus {
    status: SandboxStatus,
    probe: Arc<skiff_tools::sandbox::Probe>,
    warn: LateWarnings,
    /// The answer is logged and the warning given once (the frame opens every run).
    warned: std::sync::Once,
}

impl LateInit for LateSandboxStatus {
    fn ready(&self) -> bool {
        self.probe.get().is_some()
    }

    fn fill(&self, extra: &mut skiff_protocol::JsonMap) {
        let mut warnings = Vec::new();
        let shown = with_probe(&self.status, &self.probe, &mut warnings);
        self.warned.call_once(|| {
            tracing::info!(sandbox = %shown.summary(), "sandbox probed");
            for warning in &warnings {
                (self.warn)(warning);
            }
        });
        extra.insert("sandbox".into(), shown.to_json());
    }
}

/// What `/sandbox` shows, once the namespace probe has answered.
#[derive(Debug, Clone)]
pub struct SandboxText {
    status: SandboxStatus,
    probe: Option<Arc<skiff_tools::sandbox::Probe>>,
    auto_allow: bool,
    cwd: PathBuf,
    domains: Vec<String>,
}

impl SandboxText {
    /// Whether Bash commands run without asking while the sandbox contains them (the sandbox
    /// is enforced and `autoAllowBashIfSandboxed` is on).
    pub fn runs_commands_unasked(&self) -> bool {
        self.auto_allow && self.status.enforced()
    }
}

impl std::fmt::Display for SandboxText {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let status = match &self.probe {
            Some(p) => self.status.clone().with_namespaces(p.wait_blocking()),
            None => self.status.clone(),
        };
        f.write_str(&sandbox_description(
            &status,
            self.auto_allow,
            &self.cwd,
            &self.domains,
        ))
    }
}

/// The runtime's settings: allowed domains (with `WebFetch(domain:…)` allow rules), sockets,
/// and what commands cannot read (`sandbox.filesystem.denyRead` and `Read(…)` deny rules).
fn runtime_settings(settings: &Settings, cwd: &Path) -> skiff_tools::sandbox::SandboxSettings {
    let home = settings.home.clone();
    let mut allowed_domains: Vec<String> = settings
        .sandbox
        .allowed_domains
        .iter()
        .map(|d| d.value.clone())
        .collect();
    for rule in &settings.permissions.allow {
        if let Some(domain) = rule
            .value
            .trim()
            .strip_prefix("WebFetch(domain:")
            .and_then(|r| r.strip_suffix(')'))
        {
            allowed_domains.push(domain.trim().to_owned());
        }
    }
    let expand = |p: &str| -> PathBuf {
        match (p.strip_prefix("~/"), &home) {
            (Some(rest), Some(h)) => h.join(rest),
            _ => cwd.join(p),
        }
    };
    let mut deny_read: Vec<String> = settings
        .sandbox
        .deny_read
        .iter()
        .map(|d| expand(d.value.trim()).to_string_lossy().into_owned())
        .collect();
    let mut deny_write: Vec<String> = Vec::new();
    for rule in &settings.permissions.deny {
        let value = rule.value.trim();
        let spec = |tool: &str| {
            value
                .strip_prefix(tool)
                .and_then(|r| r.strip_prefix('('))
                .and_then(|r| r.strip_suffix(')'))
                .map(|spec| read_rule_pattern(spec.trim(), cwd, home.as_deref()))
        };
        if let Some(pattern) = spec("Read") {
            deny_read.push(pattern);
        } else if let Some(pattern) = ["Edit", "Write", "MultiEdit", "NotebookEdit"]
            .into_iter()
            .find_map(spec)
        {
            deny_write.push(pattern);
        }
    }
    skiff_tools::sandbox::SandboxSettings {
        allowed_domains,
        allow_unix_sockets: settings
            .sandbox
            .allow_unix_sockets
            .iter()
            .map(|s| expand(s.value.trim()))
            .collect(),
        deny_read,
        deny_write,
        home,
        skiff_home: settings.skiff_home.clone(),
    }
}

/// A `Read(…)` rule's path as an absolute pattern, anchored as the rule is (`//abs`, `~/…`,
/// `/…` and `./…` from the workspace, a bare name at any depth below it).
fn read_rule_pattern(spec: &str, cwd: &Path, home: Option<&Path>) -> String {
    let joined = if let Some(rest) = spec.strip_prefix("//") {
        PathBuf::from("/").join(rest)
    } else if let (Some(rest), Some(home)) = (spec.strip_prefix("~/"), home) {
        home.join(rest)
    } else if let Some(rest) = spec.strip_prefix('/').or_else(|| spec.strip_prefix("./")) {
        cwd.join(rest)
    } else if spec.trim_end_matches('/').contains('/') {
        cwd.join(spec)
    } else {
        cwd.join("**").join(spec)
    };
    joined.to_string_lossy().into_owned()
}

/// `/sandbox`: the sandbox in force, the layers this machine gives it, whether Bash still asks,
/// where commands may write, and which hosts they may reach.
fn sandbox_description(
    status: &SandboxStatus,
    auto_allow: bool,
    cwd: &Path,
    domains: &[String],
) -> String {
    let auto = status.contained() && auto_allow;
    let mut text = format!(
        "Bash sandbox: {}
layers: {}
this kernel: {}
Bash commands {}",
        status.summary(),
        status.layers(),
        status.landlock,
        if auto {
            "run without asking (the sandbox contains them; deny and ask rules still apply)"
        } else {
            "ask for approval as usual"
        }
    );
    if status.enforced() {
        text.push_str(&format!(
            "
writable: {} and its extra directories, temp directories (git config and hooks, .claude/, \
             .mcp.json, editor settings and shell start-up files stay read-only)",
            cwd.display()
        ));
    }
    if status.network == skiff_tools::sandbox::NetworkPolicy::Proxy {
        text.push_str(&format!(
            "
allowed domains: {} (others are asked about; add one with \"sandbox\": {{\"network\": \
             {{\"allowedDomains\": [\"example.com\"]}}}} in .claude/settings.local.json)",
            if domains.is_empty() {
                "none".to_owned()
            } else {
                domains.join(", ")
            }
        ));
    }
    text
}

/// The Bash sandbox these settings ask for, as this kernel can enforce it (what `skiff config`
/// shows and what the REPL's `/sandbox` and the init frame can report).
pub fn sandbox_status(settings: &Settings) -> SandboxStatus {
    SandboxStatus::decide(&settings.sandbox.policy())
}

/// [`sandbox_status`] with the namespace probe run (and waited for) here.
pub fn sandbox_status_probed(settings: &Settings, helper: Option<&Path>) -> SandboxStatus {
    let status = sandbox_status(settings);
    if !status.applies() || status.filesystem == skiff_tools::sandbox::SandboxMode::Off {
        return status;
    }
    let Some(helper) = helper.map(Path::to_path_buf).or_else(default_helper) else {
        return status;
    };
    let probe = skiff_tools::sandbox::Probe::start(
        helper,
        status.filesystem,
        status.network,
        vec![settings.cwd.clone()],
        None,
    );
    let ns = probe.wait_blocking();
    status.with_namespaces(ns)
}

/// The sandbox helper a program finds by itself: `skiff-sandbox` beside its executable (where
/// skiff installs it), else on `PATH`, else the executable itself (skiff, which understands
/// `__sandbox`; a program embedding skiff sets the helper with
/// [`crate::SessionBuilder::sandbox_helper`]).
pub fn default_helper() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let beside = exe
        .parent()
        .map(|dir| dir.join(HELPER_NAME))
        .filter(|p| p.is_file());
    let on_path = || {
        std::env::var_os("PATH").and_then(|paths| {
            std::env::split_paths(&paths)
                .map(|d| d.join(HELPER_NAME))
                .find(|p| p.is_file())
        })
    };
    Some(beside.or_else(on_path).unwrap_or(exe))
}
