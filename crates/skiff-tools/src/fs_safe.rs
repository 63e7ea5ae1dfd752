//! Opening files the way tools must: special files (FIFOs, sockets, devices) are refused before
//! they can block or flood skiff, files are opened non-blocking without following a final
//! symlink, and the opened file itself is checked (a regular file, inside the allowed
//! directories), so swapping a path component for a symlink between the path check and the
//! open gains nothing.

use std::fs::{File, FileType, Metadata, OpenOptions};
use std::io::Read;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

use crate::path_guard::PathGuard;

/// Why a file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// No such file.
    #[error("the file does not exist")]
    NotFound,
    /// Not a regular file.
    #[error("it is {0}, not a regular file; tools read and write regular files only")]
    Special(&'static str),
    /// A directory.
    #[error("it is a directory")]
    Directory,
    /// The opened file is not where the path check said it would be.
    #[error("the file changed while it was being opened (a symlink now points elsewhere)")]
    Moved,
    /// Larger than allowed.
    #[error("it is too large ({0} bytes)")]
    TooLarge(u64),
    /// Any other I/O error.
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// The kind of a special file, for messages; `None` for regular files, directories and links.
pub fn special_kind(ft: &FileType) -> Option<&'static str> {
    if ft.is_fifo() {
        Some("a FIFO (named pipe)")
    } else if ft.is_socket() {
        Some("a socket")
    } else if ft.is_char_device() {
        Some("a character device")
    } else if ft.is_block_device() {
        Some("a block device")
    } else {
        None
    }
}

/// Check what `path` is without opening it (opening a FIFO waits for a writer).
pub fn check_kind(path: &Path) -> Result<Metadata, OpenError> {
    let meta = std::fs::metadata(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => OpenError::NotFound,
        _ => OpenError::Io(e),
    })?;
    if let Some(kind) = special_kind(&meta.file_type()) {
        return Err(OpenError::Special(kind));
    }
    if meta.is_dir() {
        return Err(OpenError::Directory);
    }
    Ok(meta)
}

/// Open `path` (already resolved by the guard) for reading and read at most `max` bytes.
pub fn read_regular(
    path: &Path,
    guard: &PathGuard,
    max: u64,
) -> Result<(Vec<u8>, Metadata), OpenError> {
    check_kind(path)?;
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NONBLOCK | nix::libc::O_NOFOLLOW)
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            Some(nix::libc::ELOOP) => OpenError::Moved,
            _ if e.kind() == std::io::ErrorKind::NotFound => OpenError::NotFound,
            _ => OpenError::Io(e),
        })?;
    let meta = verify_opened(&file, guard)?;
    if meta.len() > max {
        return Err(OpenError::TooLarge(meta.len()));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    file.take(max.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max {
        return Err(OpenError::TooLarge(bytes.len() as u64));
    }
    Ok((bytes, meta))
}

/// The opened file must be a regular file inside the allowed directories.
fn verify_opened(file: &File, guard: &PathGuard) -> Result<Metadata, OpenError> {
    let meta = file.metadata()?;
    if let Some(kind) = special_kind(&meta.file_type()) {
        return Err(OpenError::Special(kind));
    }
    if meta.is_dir() {
        return Err(OpenError::Directory);
    }
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        let link = format!("/proc/self/fd/{}", file.as_raw_fd());
        if let Ok(real) = std::fs::read_link(&link)
            && real.is_absolute()
            && !guard.contains(&real)
        {
            return Err(OpenError::Moved);
        }
    }
    Ok(meta)
}

/// Whether an existing file may be changed: refused when nobody may write it, or when this
/// process may not (an open for writing, without truncating, is the test).
pub fn check_writable(path: &Path) -> Result<(), String> {
    let meta = std::fs::metadata(path).map_err(|e| e.to_string())?;
    if meta.permissions().readonly() {
        return Err("it is read-only (no write permission)".into());
    }
    OpenOptions::new()
        .write(true)
        .custom_flags(nix::libc::O_NONBLOCK)
        .open(path)
        .map(drop)
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::PermissionDenied => "you have no write permission on it".to_owned(),
            _ => e.to_string(),
        })
}
