//! Where Read, Write and Edit get and put text when a front end holds the files: an editor
//! speaking ACP serves its buffers (unsaved changes included) and saves what the tools write.
//! Without one ([`crate::ToolContext::file_access`] is `None`) the tools use the disk.
//!
//! Only the text goes through it: the workspace guard, the checks on what a path is (a
//! directory, too large, binary, an image) and the read-before-write rule stay the tools' own.

use std::path::Path;

use async_trait::async_trait;

/// Text files as a front end holds them. Paths are absolute and already accepted by the
/// workspace guard.
#[async_trait]
pub trait FileAccess: Send + Sync + std::fmt::Debug {
    /// The file's current text, unsaved changes included.
    async fn read_text(&self, path: &Path) -> std::io::Result<String>;

    /// Replace the file's text (creating the file when it does not exist).
    async fn write_text(&self, path: &Path, content: &str) -> std::io::Result<()>;
}

/// Text to check and change: the front end's when it has one and can read `path`, else the
/// disk's `bytes`. A front end that cannot read the file is logged and the disk is used.
pub(crate) async fn current_text(
    access: Option<&dyn FileAccess>,
    path: &Path,
    bytes: Vec<u8>,
) -> Vec<u8> {
    let Some(access) = access else {
        return bytes;
    };
    match access.read_text(path).await {
        Ok(text) => text.into_bytes(),
        Err(e) => {
            tracing::warn!(path = %path.display(), error = %e, "the editor cannot read the file; using the disk");
            bytes
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use std::collections::HashMap;
    use std::path::PathBuf;
    use std::sync::Mutex;

    use serde_json::json;

    use super::*;
    use crate::tool::Tool;
    use crate::{ToolContext, Typed};

    /// An editor whose buffers differ from the disk.
    #[derive(Debug, Default)]
    struct Buffers {
        files: Mutex<HashMap<PathBuf, String>>,
        writes: Mutex<Vec<PathBuf>>,
        fail_reads: bool,
    }

    #[async_trait]
    impl FileAccess for Buffers {
        async fn read_text(&self, path: &Path) -> std::io::Result<String> {
            if self.fail_reads {
                return Err(std::io::Error::other("no buffer"));
            }
            self.files
                .lock()
                .unwrap()
                .get(path)
                .cloned()
                .ok_or_else(|| std::io::Error::other("not open"))
        }

        async fn write_text(&self, path: &Path, content: &str) -> std::io::Result<()> {
            self.writes.lock().unwrap().push(path.to_path_buf());
            self.files
                .lock()
                .unwrap()
                .insert(path.to_path_buf(), content.to_owned());
            // The editor saves the buffer.
            std::fs::write(path, content)
        }
    }

    fn context(dir: &Path, buffers: std::sync::Arc<Buffers>) -> ToolContext {
        let mut ctx = ToolContext::new(dir).unwrap();
        ctx.file_access = Some(buffers);
        ctx
    }

    fn text_of(out: &crate::ToolOutput) -> String {
        serde_json::to_value(&out.content).unwrap().to_string()
    }

    #[tokio::test]
    async fn read_and_edit_see_the_unsaved_buffer_and_write_through_it() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let file = root.join("a.txt");
        std::fs::write(&file, "on disk\n").unwrap();
        let buffers = std::sync::Arc::new(Buffers::default());
        buffers
            .files
            .lock()
            .unwrap()
            .insert(file.clone(), "unsaved edit\n".into());
        let ctx = context(&root, buffers.clone());

        let read = Typed::new(crate::read::ReadTool)
            .call(json!({"file_path": "a.txt"}), &ctx)
            .await;
        assert!(!read.is_error, "{read:?}");
        assert!(text_of(&read).contains("unsaved edit"), "{read:?}");

        let edit = Typed::new(crate::edit::EditTool)
            .call(
                json!({"file_path": "a.txt", "old_string": "unsaved", "new_string": "saved"}),
                &ctx,
            )
            .await;
        assert!(!edit.is_error, "{edit:?}");
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "saved edit\n");
        assert_eq!(*buffers.writes.lock().unwrap(), vec![file.clone()]);

        let write = Typed::new(crate::write::WriteTool)
            .call(
                json!({"file_path": "new/b.txt", "content": "fresh\n"}),
                &ctx,
            )
            .await;
        assert!(!write.is_error, "{write:?}");
        assert_eq!(
            std::fs::read_to_string(root.join("new/b.txt")).unwrap(),
            "fresh\n"
        );
        assert_eq!(buffers.writes.lock().unwrap().len(), 2);
    }

    #[tokio::test]
    async fn an_editor_that_cannot_read_falls_back_to_the_disk() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::write(root.join("a.txt"), "on disk\n").unwrap();
        let buffers = std::sync::Arc::new(Buffers {
            fail_reads: true,
            ..Buffers::default()
        });
        let ctx = context(&root, buffers);
        let read = Typed::new(crate::read::ReadTool)
            .call(json!({"file_path": "a.txt"}), &ctx)
            .await;
        assert!(text_of(&read).contains("on disk"), "{read:?}");
    }
}
