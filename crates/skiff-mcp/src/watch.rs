//! Noticing that a server's lists changed, in order: a transport wrapper marks a list stale the
//! moment its `notifications/*/list_changed` is read, before any later message of the server
//! (such as the answer of the tool call that changed the list) is. So a session that asks for
//! the lists after a call's answer always sees the change the call announced.

use std::borrow::Cow;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use rmcp::RoleClient;
use rmcp::model::{JsonRpcMessage, ServerNotification};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;

/// The lists a server may say changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum List {
    /// `tools/list`.
    Tools,
    /// `prompts/list`.
    Prompts,
    /// `resources/list`.
    Resources,
}

impl List {
    /// All of them.
    pub(crate) const ALL: [List; 3] = [List::Tools, List::Prompts, List::Resources];
}

/// Which lists of a server are out of date.
#[derive(Debug, Default)]
pub(crate) struct Stale {
    tools: AtomicBool,
    prompts: AtomicBool,
    resources: AtomicBool,
}

impl Stale {
    fn flag(&self, list: List) -> &AtomicBool {
        match list {
            List::Tools => &self.tools,
            List::Prompts => &self.prompts,
            List::Resources => &self.resources,
        }
    }

    /// Mark `list` out of date.
    pub(crate) fn mark(&self, list: List) {
        self.flag(list).store(true, Ordering::SeqCst);
    }

    /// Whether `list` is out of date; it no longer is afterwards (the caller fetches it).
    pub(crate) fn take(&self, list: List) -> bool {
        self.flag(list).swap(false, Ordering::SeqCst)
    }
}

/// A transport that marks lists stale as their change notifications arrive.
pub(crate) struct Watched<T> {
    inner: T,
    stale: Arc<Stale>,
}

impl<T> Watched<T> {
    /// Watch `inner`'s messages for `stale`.
    pub(crate) fn new(inner: T, stale: Arc<Stale>) -> Self {
        Self { inner, stale }
    }
}

impl<T: Transport<RoleClient>> Transport<RoleClient> for Watched<T> {
    type Error = T::Error;

    fn name() -> Cow<'static, str> {
        T::name()
    }

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        let message = self.inner.receive().await?;
        if let JsonRpcMessage::Notification(n) = &message {
            match n.notification {
                ServerNotification::ToolListChangedNotification(_) => self.stale.mark(List::Tools),
                ServerNotification::PromptListChangedNotification(_) => {
                    self.stale.mark(List::Prompts)
                }
                ServerNotification::ResourceListChangedNotification(_) => {
                    self.stale.mark(List::Resources)
                }
                _ => {}
            }
        }
        Some(message)
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stale_list_is_taken_once() {
        let s = Stale::default();
        s.mark(List::Prompts);
        assert!(!s.take(List::Tools));
        assert!(s.take(List::Prompts));
        assert!(!s.take(List::Prompts));
    }
}
