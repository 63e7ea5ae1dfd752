//! Bash without approval only where the sandbox contains it: the permission checker of a
//! session whose sandbox would let commands run without asking. It waits, at the first Bash
//! call, for the namespace probe (which runs in the background from the start, so nothing
//! waits before the first model request); when namespaces are available it adds the
//! sandbox's allow rule `Bash` to the engine (deny and ask rules, plan mode and the engine's
//! own caution still win), and when they are not, commands are asked about as usual.

use std::path::PathBuf;
use std::sync::{Arc, Once};

use async_trait::async_trait;
use skiff_core::permissions::rule::{Rule, RuleKind, RuleOrigin};
use skiff_core::permissions::{
    PermissionChecker, PermissionDecision, PermissionEngine, PermissionQuery,
};
use skiff_tools::sandbox::{NamespaceSupport, Probe};

/// The engine, with the sandbox's allow rule once the sandbox is known to contain commands.
pub struct SandboxGate {
    engine: Arc<PermissionEngine>,
    probe: Arc<Probe>,
    cwd: PathBuf,
    added: Once,
}

impl SandboxGate {
    /// Gate `engine` on `probe`.
    pub fn new(engine: Arc<PermissionEngine>, probe: Arc<Probe>, cwd: PathBuf) -> Self {
        Self {
            engine,
            probe,
            cwd,
            added: Once::new(),
        }
    }

    async fn settle(&self) {
        if self.added.is_completed() {
            return;
        }
        if self.probe.wait().await == NamespaceSupport::Available {
            self.added
                .call_once(|| match Rule::parse("Bash", &RuleOrigin::at(&self.cwd)) {
                    Ok(rule) => self.engine.add_rule(RuleKind::Allow, rule),
                    Err(e) => tracing::warn!(error = %e, "cannot add the sandbox's Bash rule"),
                });
        }
    }
}

#[async_trait]
impl PermissionChecker for SandboxGate {
    async fn check(&self, query: &PermissionQuery<'_>) -> PermissionDecision {
        if query.tool == "Bash" {
            self.settle().await;
        }
        self.engine.check(query).await
    }

    async fn check_with_grants(
        &self,
        query: &PermissionQuery<'_>,
        grants: &[Rule],
    ) -> PermissionDecision {
        if query.tool == "Bash" {
            self.settle().await;
        }
        self.engine.check_with_grants(query, grants).await
    }
}
