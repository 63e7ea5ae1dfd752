//! Test kit for skiff: a scripted mock of the Anthropic Messages API (and, from the same
//! script, of OpenAI chat completions, and of Claude on Bedrock, Vertex AI and Foundry with
//! their authentication: [`cloud`]) on 127.0.0.1, with fault injection, request recording
//! and connection tracking; shared by tests and benchmarks.
//!
//! ```no_run
//! # async fn demo() -> std::io::Result<()> {
//! use skiff_protocol::script::ScriptTurn;
//! let server = skiff_testkit::MockServer::builder()
//!     .turn(ScriptTurn::text("hello"))
//!     .start()
//!     .await?;
//! // point the client at server.url() (ANTHROPIC_BASE_URL), then inspect server.requests()
//! # Ok(()) }
//! ```
//!
//! The script format and its rendering to events live in [`skiff_protocol::script`]; this crate
//! serves them. Token estimates (`input_tokens` in usage and in `count_tokens`) are the request
//! body's length in bytes divided by 4. The `skiff-mock` binary serves a script file.
//!
//! Every `/v1/messages` request is checked against the API's rules ([`invariants`]); a request
//! that breaks one is answered with the API's 400 `invalid_request_error`, and the
//! [`MockServer`] panics when it is dropped (unless the test is already panicking or called
//! [`MockServerBuilder::allow_invalid_requests`]), so no test can forget to check them.

mod canned;
pub mod cli;
pub mod cloud;
pub mod event_stream;
pub mod faults;
/// The request rules the mock checks (in `skiff-protocol`, shared with the scripted provider).
pub mod invariants {
    pub use skiff_protocol::request_checks::*;
}
pub mod openai;
pub mod process;
mod recording;
mod routes;
mod server;
mod shared;
pub mod sse;
mod streaming;
pub mod test_layout;
mod timeline;

pub use canned::{Canned, CannedServer};
pub use recording::RecordedRequest;
pub use server::{MockServer, MockServerBuilder};
pub use skiff_protocol::script::{Fault, Script, ScriptBlock, ScriptTurn};
