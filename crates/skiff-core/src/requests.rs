//! Questions to the client as request/response pairs: [`Requester::ask`] sends an
//! [`Event::Request`] and waits for the [`Answer`] the client sends back with the same id
//! ([`Requester::resolve`], called by the session when a `Reply` op arrives). A question that
//! stops mattering (its future is dropped, e.g. by an interrupt) is withdrawn with
//! [`Event::RequestCancelled`], so any client — terminal prompt, SDK over stdio, editor — can
//! answer in its own time and never answers a stale question.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::sync::oneshot;

use crate::event::{Answer, Event, Request, RequestId, RequestKind};
use crate::frames::EventSink;

type Pending = HashMap<RequestId, oneshot::Sender<Answer>>;

/// Asks the session's client questions. Cheap to clone; all clones share the pending table.
#[derive(Debug, Clone)]
pub struct Requester {
    sink: EventSink,
    pending: Arc<Mutex<Pending>>,
    next: Arc<AtomicU64>,
}

/// The client went away (or the session ended) before answering.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the client did not answer (the session is closing)")]
pub struct NoAnswer;

impl Requester {
    /// A requester sending its requests through `sink`.
    pub fn new(sink: EventSink) -> Self {
        Self {
            sink,
            pending: Arc::default(),
            next: Arc::new(AtomicU64::new(1)),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Pending> {
        self.pending.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Ask the client and wait for its answer. Dropping the returned future withdraws the
    /// question ([`Event::RequestCancelled`]).
    pub async fn ask(&self, kind: RequestKind) -> Result<Answer, NoAnswer> {
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        let id = RequestId(format!("req_{n}_{}", &crate::frames::new_uuid()[..8]));
        let (tx, rx) = oneshot::channel();
        self.lock().insert(id.clone(), tx);
        let mut guard = Withdraw {
            requester: self,
            id: Some(id.clone()),
        };
        self.sink.send(Event::Request(Request { id, kind }));
        let answer = rx.await.map_err(|_| NoAnswer);
        guard.id = None;
        answer
    }

    /// Deliver the client's answer to request `id`. False when no such request is pending
    /// (already answered, withdrawn, or never asked): the answer is ignored.
    pub fn resolve(&self, id: &RequestId, answer: Answer) -> bool {
        match self.lock().remove(id) {
            Some(tx) => tx.send(answer).is_ok(),
            None => {
                tracing::debug!(%id, "answer to a request that is not pending; ignored");
                false
            }
        }
    }

    /// How many requests wait for an answer.
    pub fn pending(&self) -> usize {
        self.lock().len()
    }

    /// Fail every pending request (the session is closing): their askers get [`NoAnswer`].
    pub fn abandon_all(&self) {
        self.lock().clear();
    }
}

/// Withdraws a question whose asker stopped waiting.
struct Withdraw<'a> {
    requester: &'a Requester,
    id: Option<RequestId>,
}

impl Drop for Withdraw<'_> {
    fn drop(&mut self) {
        if let Some(id) = self.id.take()
            && self.requester.lock().remove(&id).is_some()
        {
            self.requester.sink.send(Event::RequestCancelled(id));
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::*;
    use crate::event::{ApprovalAnswer, ApprovalRequest};
    use serde_json::json;
    use tokio::sync::mpsc;

    fn approval() -> RequestKind {
        RequestKind::Approval(ApprovalRequest {
            tool_name: "Bash".into(),
            input: json!({"command": "ls"}),
            tool_use_id: "toolu_1".into(),
            reason: "test".into(),
        })
    }

    #[tokio::test]
    async fn an_answer_reaches_the_asker_by_id() {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let r = Requester::new(EventSink::new(tx, "s".into()));
        let asker = tokio::spawn({
            let r = r.clone();
            async move { r.ask(approval()).await }
        });
        let Some(Event::Request(req)) = rx.recv().await else {
            panic!("no request");
        };
        assert!(!r.resolve(&RequestId("other".into()), Answer::Json(json!({}))));
        assert!(r.resolve(&req.id, Answer::Approval(ApprovalAnswer::allow())));
        assert_eq!(
            asker.await.unwrap(),
            Ok(Answer::Approval(ApprovalAnswer::allow()))
        );
        // A second answer to the same id is ignored.
        assert!(!r.resolve(&req.id, Answer::Json(json!({}))));
        assert_eq!(r.pending(), 0);
    }

    // Paused clock: the 20 ms timeout passes at once, in order.
    #[tokio::test(start_paused = true)]
    async fn a_dropped_question_is_withdrawn() {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let r = Requester::new(EventSink::new(tx, "s".into()));
        let fut = r.ask(approval());
        let res = tokio::time::timeout(std::time::Duration::from_millis(20), fut).await;
        assert!(res.is_err());
        let Some(Event::Request(req)) = rx.recv().await else {
            panic!("no request");
        };
        match rx.recv().await {
            Some(Event::RequestCancelled(id)) => assert_eq!(id, req.id),
            other => panic!("expected a withdrawal, got {other:?}"),
        }
        assert_eq!(r.pending(), 0);
        assert!(!r.resolve(&req.id, Answer::Approval(ApprovalAnswer::allow())));
    }

    #[tokio::test]
    async fn abandoned_questions_fail() {
        let (tx, _rx) = mpsc::unbounded_channel();
        let r = Requester::new(EventSink::new(tx, "s".into()));
        let asker = tokio::spawn({
            let r = r.clone();
            async move { r.ask(approval()).await }
        });
        while r.pending() == 0 {
            tokio::task::yield_now().await;
        }
        r.abandon_all();
        assert_eq!(asker.await.unwrap(), Err(NoAnswer));
    }
}
