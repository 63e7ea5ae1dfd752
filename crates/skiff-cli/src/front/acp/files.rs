//! Read, Write and Edit through the editor (`fs/read_text_file`, `fs/write_text_file`) when it
//! offers them, so the model sees unsaved buffers and the editor applies the changes.

use std::path::Path;
use std::time::Duration;

use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{ReadTextFileRequest, SessionId, WriteTextFileRequest};
use async_trait::async_trait;

/// How long the editor gets to answer one file request.
const ANSWER_WITHIN: Duration = Duration::from_secs(60);

/// A session's files as its editor holds them.
#[derive(Debug, Clone)]
pub struct EditorFiles {
    /// The connection to the editor.
    pub cx: ConnectionTo<Client>,
    /// The session the requests are about.
    pub session_id: SessionId,
    /// The editor offers `fs/read_text_file`.
    pub read: bool,
    /// The editor offers `fs/write_text_file`.
    pub write: bool,
}

fn failed(what: &str, path: &Path, e: impl std::fmt::Display) -> std::io::Error {
    std::io::Error::other(format!(
        "the editor could not {what} {}: {e}",
        path.display()
    ))
}

#[async_trait]
impl skiff_tools::FileAccess for EditorFiles {
    async fn read_text(&self, path: &Path) -> std::io::Result<String> {
        if !self.read {
            return Err(std::io::Error::new(
                std::io::ErrorKind::Unsupported,
                "the editor does not read files",
            ));
        }
        let request = ReadTextFileRequest::new(self.session_id.clone(), path.to_path_buf());
        match tokio::time::timeout(ANSWER_WITHIN, self.cx.send_request(request).block_task()).await
        {
            Ok(Ok(r)) => Ok(r.content),
            Ok(Err(e)) => Err(failed("read", path, e)),
            Err(_) => Err(failed("read", path, "no answer within 60 s")),
        }
    }

    async fn write_text(&self, path: &Path, content: &str) -> std::io::Result<()> {
        if !self.write {
            // The editor only reads: write the disk as the tools do.
            let (target, bytes) = (path.to_path_buf(), content.as_bytes().to_vec());
            return tokio::task::spawn_blocking(move || {
                skiff_tools::atomic::write_atomic(&target, &bytes)
            })
            .await
            .map_err(std::io::Error::other)?;
        }
        let request = WriteTextFileRequest::new(
            self.session_id.clone(),
            path.to_path_buf(),
            content.to_owned(),
        );
        match tokio::time::timeout(ANSWER_WITHIN, self.cx.send_request(request).block_task()).await
        {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(e)) => Err(failed("write", path, e)),
            Err(_) => Err(failed("write", path, "no answer within 60 s")),
        }
    }
}
