//! Choosing and building the model provider: the Anthropic API, Claude on a cloud (Bedrock,
//! Vertex AI, Foundry: `CLAUDE_CODE_USE_*` or `--provider`), OpenAI-compatible servers (by
//! name: ollama, llamacpp, vllm, lmstudio, openrouter, or `openai` with a base URL), or the
//! scripted provider; and `skiff models`.

#[allow(unused_imports)]
use crate::error::{ConfigError, Result, UnconfirmedBaseUrl, bail, invalid};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use skiff_llm::cloud::{Cloud, CloudConfig, CloudProvider};
use skiff_llm::openai::{Preset, preset};
use skiff_llm::{
    AnthropicConfig, AnthropicProvider, Credential, OpenAiConfig, OpenAiProvider, Provider,
    ScriptedProvider,
};

use crate::environment::Environment;
use crate::overrides::Overrides;
use crate::settings::{Layer, Settings, Source};

/// Which backend the settings ask for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// The Anthropic Messages API (and servers that imitate it).
    Anthropic,
    /// A model script, offline.
    Script,
    /// An OpenAI-compatible chat-completions server.
    OpenAi(&'static Preset),
    /// Claude on a cloud.
    Cloud(Cloud),
}

impl Backend {
    /// The backend named by `settings.provider` (validated when it was read); when none was
    /// named, the cloud whose `CLAUDE_CODE_USE_*` switch is on, as in Claude Code.
    pub fn of(settings: &Settings) -> Self {
        match settings.provider.value.as_str() {
            "script" => Self::Script,
            "anthropic" if settings.provider.source == Source::Default => {
                Cloud::detect(|k| settings.lookup.get(k)).map_or(Self::Anthropic, Self::Cloud)
            }
            "anthropic" => Self::Anthropic,
            other => Cloud::from_name(other)
                .map(Self::Cloud)
                .or_else(|| preset(other).map(Self::OpenAi))
                .unwrap_or(Self::Anthropic),
        }
    }

    /// Its `--provider` name.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Anthropic => "anthropic",
            Self::Script => "script",
            Self::OpenAi(p) => p.name,
            Self::Cloud(c) => c.name(),
        }
    }

    /// A server on this machine: no key, no prices (the REPL shows "local" for cost).
    pub fn is_local(&self) -> bool {
        matches!(self, Self::OpenAi(p) if p.local)
    }
}

/// The provider built, and what `system/init` reports about its credential.
pub struct Built {
    /// The provider.
    pub provider: Arc<dyn Provider>,
    /// `apiKeySource`.
    pub key_source: String,
    /// The cloud's configuration (model ids, what `system/init` says), on a cloud.
    pub cloud: Option<CloudConfig>,
}

/// Build the provider of `backend`.
pub fn build(
    backend: &Backend,
    settings: &Settings,
    args: &Overrides,
    cwd: &Path,
) -> Result<Built> {
    match backend {
        Backend::Script => {
            let Some(path) = &args.script else {
                return Err(ConfigError::usage("--provider script needs --script FILE"));
            };
            Ok(Built {
                provider: Arc::new(
                    ScriptedProvider::from_file(path)
                        .map_err(|e| invalid!("--script {}: {e}", path.display()))?
                        .without_recording(),
                ),
                key_source: "none".to_owned(),
                cloud: None,
            })
        }
        Backend::Anthropic => {
            let mut cfg = anthropic_config(settings)?;
            let mut url_var = "ANTHROPIC_BASE_URL";
            let mut url_source = settings.lookup.source("ANTHROPIC_BASE_URL");
            if let Some(url) = &settings.base_url {
                cfg.base_url = url.value.clone();
                url_var = "skiff.baseUrl";
                url_source = Some(url.source.clone());
            }
            check_workspace_base_url(
                settings,
                args,
                BaseUrlCheck {
                    url: &cfg.base_url,
                    url_var,
                    url_source,
                    credential: Some(&cfg.credential),
                },
                cwd,
            )?;
            let key_source = cfg.credential.source_name().to_owned();
            cfg.betas.extend(flag_betas(args));
            fall_back_after_overloads(&mut cfg.retry, args);
            Ok(Built {
                provider: Arc::new(AnthropicProvider::new(cfg)?),
                key_source,
                cloud: None,
            })
        }
        Backend::OpenAi(preset) => {
            let mut cfg = openai_config(preset, settings)?;
            fall_back_after_overloads(&mut cfg.retry, args);
            let url_source = match &settings.base_url {
                Some(u) => Some(u.source.clone()),
                None => settings.lookup.source("OPENAI_BASE_URL"),
            };
            let url_var = if settings.base_url.is_some() {
                "skiff.baseUrl"
            } else {
                "OPENAI_BASE_URL"
            };
            check_workspace_base_url(
                settings,
                args,
                BaseUrlCheck {
                    url: &cfg.base_url,
                    url_var,
                    url_source,
                    credential: cfg.credential.as_ref(),
                },
                cwd,
            )?;
            let key_source = cfg
                .credential
                .as_ref()
                .map_or("none", Credential::source_name)
                .to_owned();
            Ok(Built {
                provider: Arc::new(OpenAiProvider::new(cfg)?),
                key_source,
                cloud: None,
            })
        }
        Backend::Cloud(cloud) => {
            let mut cfg = cloud_config(*cloud, settings)?;
            cfg.add_betas(&flag_betas(args));
            let mut retry = cfg.retry().clone();
            fall_back_after_overloads(&mut retry, args);
            cfg.set_retry(retry);
            let summary = cfg.summary();
            if let Some(var) = summary.endpoint_var {
                let (url_var, url_source) = match &settings.base_url {
                    Some(u) => ("skiff.baseUrl", Some(u.source.clone())),
                    None => (var, settings.lookup.source(var)),
                };
                check_workspace_cloud_endpoint(
                    settings,
                    args,
                    BaseUrlCheck {
                        url: &summary.endpoint,
                        url_var,
                        url_source,
                        credential: None,
                    },
                    &summary,
                    cwd,
                )?;
            }
            tracing::info!(cloud = cloud.name(), endpoint = %crate::settings::redact_url(&summary.endpoint),
                credential = %summary.credential, "cloud provider");
            Ok(Built {
                provider: Arc::new(CloudProvider::new(cfg.clone())?),
                key_source: summary.credential,
                cloud: Some(cfg),
            })
        }
    }
}

/// `--betas`, each value trimmed, none empty.
fn flag_betas(args: &Overrides) -> Vec<String> {
    args.betas
        .iter()
        .flat_map(|b| b.split(','))
        .map(str::trim)
        .filter(|b| !b.is_empty())
        .map(str::to_owned)
        .collect()
}

/// With `--fallback-model`, a call gives up on the main model after 3 overloaded responses in
/// a row (Claude Code's count) so that the session can switch.
fn fall_back_after_overloads(retry: &mut skiff_llm::RetryPolicy, args: &Overrides) {
    if args
        .fallback_model
        .as_deref()
        .is_some_and(|f| !f.trim().is_empty())
    {
        retry.max_overloaded = Some(3);
    }
}

/// A cloud's configuration from the settings' variable lookup; `skiff.baseUrl` / `--base-url`
/// stand for the cloud's endpoint variable, `skiff.retries` applies.
pub fn cloud_config(cloud: Cloud, settings: &Settings) -> Result<CloudConfig> {
    let endpoint_var = cloud.endpoint_vars()[0];
    let base_url = settings.base_url.as_ref().map(|u| u.value.clone());
    let mut cfg = CloudConfig::from_lookup(cloud, |k| match &base_url {
        Some(u) if k == endpoint_var => Some(u.clone()),
        _ => settings.lookup.get(k),
    })
    .map_err(|e| invalid!("{} ({}): {e}", cloud.title(), cloud.switch_var()))?;
    if let Some(r) = &settings.retries {
        cfg.set_max_retries(r.value);
    }
    Ok(cfg)
}

/// A cloud endpoint the workspace's files set: refused unless the credential comes from the
/// workspace too or the user confirmed the host (the rule of [`check_workspace_base_url`]).
fn check_workspace_cloud_endpoint(
    settings: &Settings,
    args: &Overrides,
    check: BaseUrlCheck<'_>,
    summary: &skiff_llm::cloud::CloudSummary,
    cwd: &Path,
) -> Result<()> {
    if summary.credential.starts_with("none") {
        return Ok(());
    }
    let key_from_workspace = !summary.credential_vars.is_empty()
        && summary.credential_vars.iter().all(|v| {
            settings
                .lookup
                .source(v)
                .and_then(|s| workspace_file(&s, cwd))
                .is_some()
        });
    if key_from_workspace {
        return Ok(());
    }
    check_endpoint_confirmed(settings, args, &check, cwd)
}

/// The model when none was asked for: `scripted` for a script (it costs nothing); an error
/// naming the way to find one for servers that need a name. `None`: keep the configured one.
pub fn default_model(backend: &Backend, settings: &Settings) -> Result<Option<String>> {
    if !matches!(settings.model.source, Source::Default) {
        return Ok(None);
    }
    match backend {
        Backend::Anthropic | Backend::Cloud(_) => Ok(None),
        Backend::Script => Ok(Some(skiff_llm::SCRIPTED_MODEL.to_owned())),
        // llama-server serves the model it was started with, whatever the request names.
        Backend::OpenAi(p) if p.name == "llamacpp" => Ok(Some("llama.cpp".to_owned())),
        Backend::OpenAi(p) => Err(ConfigError::usage(format!(
            "--model is needed with --provider {0}; `skiff models --provider {0}` lists what the \
             server offers",
            p.name
        ))),
    }
}

/// The OpenAI-compatible provider's configuration: the preset, the settings' variables
/// (OPENAI_BASE_URL, OPENAI_API_KEY, …), `skiff.baseUrl` / `--base-url`, retries.
pub fn openai_config(preset: &'static Preset, settings: &Settings) -> Result<OpenAiConfig> {
    let mut cfg = OpenAiConfig::from_lookup(preset, |k| settings.lookup.get(k))?;
    if let Some(url) = &settings.base_url {
        cfg.base_url = skiff_llm::openai::normalize_base_url(&url.value)?;
    }
    if let Some(r) = &settings.retries {
        cfg.retry.max_retries = r.value;
    }
    cfg.text_tool_calls = settings.text_tool_calls.value;
    let hosted = cfg.base_url == preset.base_url && !preset.local;
    if cfg.credential.is_none() && hosted {
        let var = preset.key_var.unwrap_or("OPENAI_API_KEY");
        bail!(
            "no API key found for {}. Set {var} (for example `export {var}=sk-...`), or point \
             --base-url at a server that needs none",
            preset.name
        );
    }
    Ok(cfg)
}

/// The Anthropic provider's configuration from the settings' variable lookup (real env, `.env`
/// files, settings `env`), with `skiff.retries` applied.
fn anthropic_config(settings: &Settings) -> Result<AnthropicConfig> {
    let mut cfg = match AnthropicConfig::from_lookup(|k| settings.lookup.get(k)) {
        Ok(cfg) => cfg,
        Err(skiff_llm::ConfigError::MissingCredential) => {
            let home_env = settings.skiff_home.as_ref().map_or_else(
                || "~/.skiff/.env".to_owned(),
                |h| h.join(".env").display().to_string(),
            );
            let helper = if settings.api_key_helper.is_some() {
                " (apiKeyHelper in the settings is not supported by skiff)"
            } else {
                ""
            };
            let untrusted = if settings.trusted {
                ""
            } else {
                " (a workspace .env counts only once the workspace is trusted: --trust)"
            };
            bail!(
                "no API key found{helper}. Set ANTHROPIC_API_KEY (for example `export ANTHROPIC_API_KEY=sk-ant-...`), \
                 or put it in {home_env} or {}{untrusted}; ANTHROPIC_AUTH_TOKEN for a bearer token. \
                 For a local model: --provider ollama (or llamacpp, vllm, lmstudio) --model NAME",
                settings.cwd.join(".env").display()
            );
        }
        Err(e) => return Err(e.into()),
    };
    if let Some(r) = &settings.retries {
        cfg.retry.max_retries = r.value;
    }
    // Set: as said; by default on for any server but the Anthropic API (a local model).
    cfg.text_tool_calls = (!matches!(settings.text_tool_calls.source, Source::Default))
        .then_some(settings.text_tool_calls.value);
    if let Some(src) = settings.lookup.source("ANTHROPIC_BASE_URL") {
        tracing::info!(base_url = %crate::settings::redact_url(&cfg.base_url), source = %src, "API base URL");
    }
    Ok(cfg)
}

/// What [`check_workspace_base_url`] looks at.
struct BaseUrlCheck<'a> {
    url: &'a str,
    /// The variable or setting that set it (for the message).
    url_var: &'static str,
    /// Where that came from.
    url_source: Option<Source>,
    /// The key that would go there.
    credential: Option<&'a Credential>,
}

/// Refuse a workspace-set base URL when the key comes from elsewhere, unless the user confirmed
/// the host (`--trust-base-url HOST`, or the REPL's question recorded in the trust store).
fn check_workspace_base_url(
    settings: &Settings,
    args: &Overrides,
    check: BaseUrlCheck<'_>,
    cwd: &Path,
) -> Result<()> {
    if check
        .url_source
        .as_ref()
        .and_then(|s| workspace_file(s, cwd))
        .is_none()
    {
        return Ok(());
    }
    // No key goes anywhere: nothing to protect.
    let Some(credential) = check.credential else {
        return Ok(());
    };
    let key_from_workspace = settings
        .lookup
        .source(credential.source_name())
        .and_then(|s| workspace_file(&s, cwd))
        .is_some();
    if key_from_workspace {
        return Ok(());
    }
    check_endpoint_confirmed(settings, args, &check, cwd)
}

/// The host of a workspace-set endpoint must be confirmed (`--trust-base-url HOST`, or the
/// REPL's question recorded in the trust store).
fn check_endpoint_confirmed(
    settings: &Settings,
    args: &Overrides,
    check: &BaseUrlCheck<'_>,
    cwd: &Path,
) -> Result<()> {
    let Some(url_file) = check
        .url_source
        .as_ref()
        .and_then(|s| workspace_file(s, cwd))
    else {
        return Ok(());
    };
    let host = skiff_core::permissions::rule::host_of(check.url).unwrap_or_default();
    let confirmed = args
        .trust_base_url
        .as_deref()
        .is_some_and(|h| h.eq_ignore_ascii_case(&host))
        || crate::trust::Store::load(settings.skiff_home.as_deref()).confirmed_host(cwd, &host);
    if confirmed {
        return Ok(());
    }
    Err(ConfigError::UnconfirmedBaseUrl(UnconfirmedBaseUrl {
        host,
        file: url_file.display().to_string(),
        var: check.url_var,
    }))
}

/// The workspace file a setting comes from, if it comes from the workspace's own files (its
/// `.env`, or project / local settings).
fn workspace_file(source: &Source, cwd: &Path) -> Option<PathBuf> {
    match source {
        Source::Env {
            origin: crate::settings::EnvOrigin::DotEnv(path),
            ..
        } if path.starts_with(cwd) => Some(path.clone()),
        Source::Env {
            origin: crate::settings::EnvOrigin::Settings(inner),
            ..
        } => workspace_file(inner, cwd),
        Source::File {
            layer: Layer::Project | Layer::Local,
            path,
        } => Some(path.clone()),
        _ => None,
    }
}

/// `skiff models`: the models the provider offers, one a line. An OpenAI-compatible server is
/// asked (`GET /models`); for the Anthropic API and the clouds skiff lists the models it knows
/// prices of.
pub fn models_text(overrides: &Overrides, env: &Environment) -> Result<String> {
    let cwd = match &overrides.cwd {
        Some(d) => d.clone(),
        None => std::env::current_dir()
            .map_err(|e| ConfigError::io("cannot read the current directory", e))?,
    };
    let settings = Settings::load(overrides, env, &cwd)?;
    let backend = Backend::of(&settings);
    let mut out = String::new();
    match backend {
        Backend::OpenAi(preset) => {
            let cfg = openai_config(preset, &settings)?;
            let base = cfg.base_url.clone();
            let provider = OpenAiProvider::new(cfg)?;
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| ConfigError::io("cannot start a runtime", e))?;
            let models = runtime
                .block_on(provider.list_models())
                .map_err(|e| invalid!("{base}: {e}"))?;
            if models.is_empty() {
                out.push_str(&format!("{base} offers no models\n"));
            }
            for m in models {
                out.push_str(&m.id);
                if let Some(n) = m.context_window {
                    out.push_str(&format!("\tcontext {n}"));
                }
                out.push('\n');
            }
        }
        Backend::Anthropic => {
            for m in skiff_llm::known_models() {
                out.push_str(&format!(
                    "{}\tcontext {}\t${}/${} per million input/output tokens\n",
                    m.id, m.context_window, m.input_per_mtok, m.output_per_mtok
                ));
            }
        }
        Backend::Script => out.push_str("scripted\n"),
        Backend::Cloud(cloud) => {
            let cfg = cloud_config(cloud, &settings)?;
            for m in skiff_llm::known_models() {
                out.push_str(&format!(
                    "{}\t{}\tcontext {}\t${}/${} per million input/output tokens\n",
                    cfg.map_model(m.id),
                    m.id,
                    m.context_window,
                    m.input_per_mtok,
                    m.output_per_mtok
                ));
            }
        }
    }
    Ok(out)
}

/// What `system/init` says about the cloud in use (its `cloud` field; never a secret).
pub fn cloud_json(sum: &skiff_llm::cloud::CloudSummary) -> serde_json::Value {
    serde_json::json!({
        "provider": sum.cloud.name(),
        "name": sum.cloud.title(),
        "region": sum.region.as_ref().map(|(r, _)| r),
        "project": sum.project,
        "endpoint": crate::settings::redact_url(&sum.endpoint),
        "credentials": sum.credential,
    })
}

/// The `--provider` names: the Anthropic API, the scripted provider, and OpenAI-compatible
/// servers (`openai` and the named presets).
pub const PROVIDER_NAMES: &[&str] = &[
    "anthropic",
    "openai",
    "ollama",
    "llamacpp",
    "vllm",
    "lmstudio",
    "openrouter",
    "bedrock",
    "vertex",
    "foundry",
    "script",
];

/// `--provider`: a known name, spelled as the user likes (`llama.cpp`, `LMStudio`).
pub fn parse_provider(text: &str) -> Result<String, String> {
    let key: String = text
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .collect::<String>()
        .to_ascii_lowercase();
    PROVIDER_NAMES
        .iter()
        .find(|n| **n == key)
        .map(|n| (*n).to_owned())
        .ok_or_else(|| format!("unknown provider; one of {}", PROVIDER_NAMES.join(", ")))
}
