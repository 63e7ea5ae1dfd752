//! What a server offers — its tools, prompts, resources and instructions — fetched when it
//! connects, and again when it says a list changed (see [`crate::watch`]). A server's
//! [`ServerState`] holds the latest [`Offer`] and a version that moves only when the offer
//! really changed.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, PoisonError, RwLock};
use std::time::Duration;

use rmcp::model::ServerPeerInfo;
use rmcp::{Peer, RoleClient};
use serde_json::Value;
use skiff_tools::McpPromptArgument;

use crate::watch::{List, Stale};

/// One tool a server offers, as listed.
#[derive(Debug, Clone, PartialEq)]
pub struct ListedTool {
    /// The server's name for it.
    pub name: String,
    /// Its description.
    pub description: Option<String>,
    /// Its input schema.
    pub input_schema: serde_json::Value,
    /// The server says it only reads (`annotations.readOnlyHint`).
    pub read_only_hint: bool,
}

/// A prompt a server offers, as listed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListedPrompt {
    /// The server's name for it.
    pub name: String,
    /// Its description.
    pub description: Option<String>,
    /// Its arguments, in order.
    pub arguments: Vec<McpPromptArgument>,
}

/// A resource a server offers, as listed.
#[derive(Debug, Clone, PartialEq)]
pub struct ListedResource {
    /// Its URI.
    pub uri: String,
    /// The whole entry as the server sent it (`uri`, `name`, `mimeType`, `description`, …).
    pub entry: Value,
}

/// Everything a server offers now.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Offer {
    /// Its tools.
    pub tools: Vec<ListedTool>,
    /// Its prompts (none when it has no prompts capability).
    pub prompts: Vec<ListedPrompt>,
    /// Its resources (none when it has no resources capability).
    pub resources: Vec<ListedResource>,
    /// Its `instructions` from the handshake.
    pub instructions: Option<String>,
    /// It declared the prompts capability.
    pub has_prompts: bool,
    /// It declared the resources capability.
    pub has_resources: bool,
}

/// A server's offer as it stands, and what is out of date.
#[derive(Debug)]
pub(crate) struct ServerState {
    /// The server's name (for logs).
    name: String,
    /// Lists marked out of date by the server's notifications.
    pub(crate) stale: Arc<Stale>,
    offer: RwLock<Offer>,
    version: AtomicU64,
    /// One fetch at a time: a notification's and a session's refresh do not overlap.
    fetching: tokio::sync::Mutex<()>,
    /// Bound on one list request.
    timeout: Duration,
}

impl ServerState {
    /// The state of the server `name`; list requests wait at most `timeout`.
    pub(crate) fn new(name: &str, timeout: Duration) -> Self {
        Self {
            name: name.to_owned(),
            stale: Arc::default(),
            offer: RwLock::default(),
            version: AtomicU64::new(0),
            fetching: tokio::sync::Mutex::new(()),
            timeout,
        }
    }

    /// The offer now.
    pub(crate) fn offer(&self) -> Offer {
        self.offer
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Moves each time the offer changes.
    pub(crate) fn version(&self) -> u64 {
        self.version.load(Ordering::SeqCst)
    }

    /// Change the offer with `f`; the version moves when it really changed.
    fn update(&self, f: impl FnOnce(&mut Offer)) {
        let mut offer = self.offer.write().unwrap_or_else(PoisonError::into_inner);
        let before = offer.clone();
        f(&mut offer);
        if *offer != before {
            self.version.fetch_add(1, Ordering::SeqCst);
        }
    }

    /// Take the offer fetched at connection.
    pub(crate) fn set(&self, offer: Offer) {
        self.update(|o| *o = offer);
    }

    /// A new connection to the same server (it was restarted): its handshake's instructions
    /// and capabilities now, and every list fetched again before it is next used.
    pub(crate) fn reconnected(&self, info: Option<&ServerPeerInfo>) {
        self.update(|o| {
            o.instructions = info.and_then(|i| i.instructions.clone());
            o.has_prompts = info.is_some_and(|i| i.capabilities.prompts.is_some());
            o.has_resources = info.is_some_and(|i| i.capabilities.resources.is_some());
        });
        for list in List::ALL {
            self.stale.mark(list);
        }
    }

    /// Fetch again the lists marked out of date. A list that cannot be fetched keeps its last
    /// contents (with a warning).
    pub(crate) async fn refetch(&self, peer: &Peer<RoleClient>) {
        let _one = self.fetching.lock().await;
        let (has_prompts, has_resources) = {
            let o = self.offer.read().unwrap_or_else(PoisonError::into_inner);
            (o.has_prompts, o.has_resources)
        };
        for list in List::ALL {
            if !self.stale.take(list) {
                continue;
            }
            let fetched = match list {
                List::Tools => self.bounded(fetch_tools(peer)).await.map(Fetched::Tools),
                List::Prompts if has_prompts => self
                    .bounded(fetch_prompts(peer))
                    .await
                    .map(Fetched::Prompts),
                List::Resources if has_resources => self
                    .bounded(fetch_resources(peer))
                    .await
                    .map(Fetched::Resources),
                _ => continue,
            };
            match fetched {
                Ok(Fetched::Tools(t)) => self.update(|o| o.tools = t),
                Ok(Fetched::Prompts(p)) => self.update(|o| o.prompts = p),
                Ok(Fetched::Resources(r)) => self.update(|o| o.resources = r),
                Err(e) => {
                    tracing::warn!(server = %self.name, ?list, error = %e, "cannot list again; keeping the last list")
                }
            }
        }
    }

    async fn bounded<T>(&self, f: impl Future<Output = Result<T, String>>) -> Result<T, String> {
        tokio::time::timeout(self.timeout, f)
            .await
            .unwrap_or_else(|_| Err(format!("no answer within {} ms", self.timeout.as_millis())))
    }
}

enum Fetched {
    Tools(Vec<ListedTool>),
    Prompts(Vec<ListedPrompt>),
    Resources(Vec<ListedResource>),
}

/// Everything a server that just connected offers. Its tools must list; prompts and resources
/// that do not are left out with a warning.
pub(crate) async fn fetch_offer(
    name: &str,
    peer: &Peer<RoleClient>,
    info: Option<&ServerPeerInfo>,
) -> Result<Offer, String> {
    let tools = fetch_tools(peer).await?;
    let has_prompts = info.is_some_and(|i| i.capabilities.prompts.is_some());
    let has_resources = info.is_some_and(|i| i.capabilities.resources.is_some());
    let prompts = if has_prompts {
        fetch_prompts(peer).await.unwrap_or_else(|e| {
            tracing::warn!(server = %name, error = %e, "prompts/list failed; no prompts");
            Vec::new()
        })
    } else {
        Vec::new()
    };
    let resources = if has_resources {
        fetch_resources(peer).await.unwrap_or_else(|e| {
            tracing::warn!(server = %name, error = %e, "resources/list failed; no resources");
            Vec::new()
        })
    } else {
        Vec::new()
    };
    Ok(Offer {
        tools,
        prompts,
        resources,
        instructions: info.and_then(|i| i.instructions.clone()),
        has_prompts,
        has_resources,
    })
}

async fn fetch_tools(peer: &Peer<RoleClient>) -> Result<Vec<ListedTool>, String> {
    let listed = peer
        .list_all_tools()
        .await
        .map_err(|e| format!("tools/list failed: {e}"))?;
    Ok(listed
        .into_iter()
        .map(|t| ListedTool {
            read_only_hint: t
                .annotations
                .as_ref()
                .and_then(|a| a.read_only_hint)
                .unwrap_or(false),
            name: t.name.to_string(),
            description: t.description.map(|d| d.to_string()),
            input_schema: Value::Object((*t.input_schema).clone()),
        })
        .collect())
}

async fn fetch_prompts(peer: &Peer<RoleClient>) -> Result<Vec<ListedPrompt>, String> {
    let listed = peer
        .list_all_prompts()
        .await
        .map_err(|e| format!("prompts/list failed: {e}"))?;
    Ok(listed
        .into_iter()
        .map(|p| ListedPrompt {
            name: p.name,
            description: p.description.or(p.title),
            arguments: p
                .arguments
                .unwrap_or_default()
                .into_iter()
                .map(|a| McpPromptArgument {
                    name: a.name,
                    description: a.description.or(a.title),
                    required: a.required.unwrap_or(false),
                })
                .collect(),
        })
        .collect())
}

async fn fetch_resources(peer: &Peer<RoleClient>) -> Result<Vec<ListedResource>, String> {
    let listed = peer
        .list_all_resources()
        .await
        .map_err(|e| format!("resources/list failed: {e}"))?;
    Ok(listed
        .into_iter()
        .filter_map(|r| serde_json::to_value(&r).ok())
        .filter_map(|entry| {
            let uri = entry.get("uri")?.as_str()?.to_owned();
            Some(ListedResource { uri, entry })
        })
        .collect())
}
