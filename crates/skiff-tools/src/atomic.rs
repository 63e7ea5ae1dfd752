//! Atomic file replacement: write a temp file in the same directory, then rename it over the
//! target, keeping the target's permissions. A crash leaves either the old or the new file.
//!
//! [`write_atomic_within`] (the tools' writes) does it all relative to one handle on the
//! directory, checked to lie inside the allowed directories: a directory of the path swapped
//! for a symlink during the call cannot send the temp file, or the file, anywhere else.

use std::io::Write;
use std::path::Path;

/// Replace (or create) `path` with `bytes` atomically. Parent directories are created.
/// An existing file's permissions are kept; a new file gets the usual default (0644 & umask).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path
        .parent()
        .ok_or_else(|| std::io::Error::other("the path has no parent directory"))?;
    std::fs::create_dir_all(dir)?;
    let existing = std::fs::metadata(path).ok().map(|m| m.permissions());
    let mut tmp = tempfile::Builder::new()
        .prefix(".skiff-")
        .suffix(".tmp")
        .tempfile_in(dir)?;
    tmp.write_all(bytes)?;
    tmp.as_file().sync_all()?;
    let perms = match existing {
        Some(p) => p,
        None => {
            use std::os::unix::fs::PermissionsExt;
            std::fs::Permissions::from_mode(0o644)
        }
    };
    tmp.as_file().set_permissions(perms)?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// [`write_atomic`] for a path the guard resolved: the directory is opened once (missing
/// directories made one at a time below it, never through a symlink), checked to be inside the
/// allowed directories, and the temp file is created, written and renamed relative to that
/// handle.
#[cfg(target_os = "linux")]
pub fn write_atomic_within(
    path: &Path,
    bytes: &[u8],
    guard: &crate::path_guard::PathGuard,
) -> std::io::Result<()> {
    use nix::fcntl::{AtFlags, OFlag, openat, renameat};
    use nix::sys::stat::{Mode, fchmod, fstatat};
    use nix::unistd::{UnlinkatFlags, unlinkat};
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
        return Err(std::io::Error::other("the path has no parent directory"));
    };
    let dir = open_dir_within(dir, guard)?;
    let mode = match fstatat(&dir, name, AtFlags::AT_SYMLINK_NOFOLLOW) {
        Ok(st) if st.st_mode & nix::libc::S_IFMT == nix::libc::S_IFREG => st.st_mode & 0o7777,
        _ => 0o644,
    };
    let mut attempt = 0;
    let (tmp_name, fd) = loop {
        let tmp_name = format!(".skiff-{}.tmp", random_suffix());
        match openat(
            &dir,
            tmp_name.as_str(),
            OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_EXCL | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
            Mode::from_bits_truncate(0o600),
        ) {
            Ok(fd) => break (tmp_name, fd),
            Err(nix::errno::Errno::EEXIST) if attempt < 16 => attempt += 1,
            Err(e) => return Err(e.into()),
        }
    };
    let written = (|| {
        let mut file = std::fs::File::from(fd);
        file.write_all(bytes)?;
        file.sync_all()?;
        fchmod(&file, Mode::from_bits_truncate(mode))?;
        renameat(&dir, tmp_name.as_str(), &dir, name)?;
        Ok::<(), std::io::Error>(())
    })();
    if written.is_err() {
        let _ = unlinkat(&dir, tmp_name.as_str(), UnlinkatFlags::NoRemoveDir);
    }
    written
}

/// Not Linux: [`write_atomic`] after the guard's check.
#[cfg(not(target_os = "linux"))]
pub fn write_atomic_within(
    path: &Path,
    bytes: &[u8],
    _guard: &crate::path_guard::PathGuard,
) -> std::io::Result<()> {
    write_atomic(path, bytes)
}

/// A handle on `dir`, which must really lie inside the guard's directories; the directories
/// of it that are missing are made below the deepest existing one, each opened without
/// following a symlink.
#[cfg(target_os = "linux")]
fn open_dir_within(
    dir: &Path,
    guard: &crate::path_guard::PathGuard,
) -> std::io::Result<std::os::fd::OwnedFd> {
    use nix::fcntl::{OFlag, open, openat};
    use nix::sys::stat::{Mode, mkdirat};
    let flags = OFlag::O_DIRECTORY | OFlag::O_RDONLY | OFlag::O_CLOEXEC;
    let mut existing = dir;
    let mut missing = Vec::new();
    let mut fd = loop {
        match open(existing, flags, Mode::empty()) {
            Ok(fd) => break fd,
            Err(nix::errno::Errno::ENOENT) => {
                let (Some(parent), Some(name)) = (existing.parent(), existing.file_name()) else {
                    return Err(std::io::Error::from(std::io::ErrorKind::NotFound));
                };
                missing.push(name.to_os_string());
                existing = parent;
            }
            Err(e) => return Err(e.into()),
        }
    };
    let real = std::fs::read_link(format!(
        "/proc/self/fd/{}",
        std::os::fd::AsRawFd::as_raw_fd(&fd)
    ))?;
    if !guard.contains(&real) {
        return Err(std::io::Error::other(format!(
            "{} changed while the file was being written: it now leads to {}, outside the \
             workspace; nothing was written",
            existing.display(),
            real.display()
        )));
    }
    for name in missing.iter().rev() {
        match mkdirat(&fd, name.as_os_str(), Mode::from_bits_truncate(0o777)) {
            Ok(()) | Err(nix::errno::Errno::EEXIST) => {}
            Err(e) => return Err(e.into()),
        }
        fd = openat(
            &fd,
            name.as_os_str(),
            flags | OFlag::O_NOFOLLOW,
            Mode::empty(),
        )?;
    }
    Ok(fd)
}

/// A random name part for temp files.
#[cfg(target_os = "linux")]
fn random_suffix() -> String {
    use std::hash::BuildHasher;
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let x = std::collections::hash_map::RandomState::new().hash_one((
        n,
        std::process::id(),
        std::time::Instant::now(),
    ));
    format!("{x:016x}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn keeps_permissions_and_leaves_no_temp_files() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("sub/dir/script.sh");
        write_atomic(&p, b"one").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"one");
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        write_atomic(&p, b"two").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"two");
        let mode = std::fs::metadata(&p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o755);
        let names: Vec<_> = std::fs::read_dir(p.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 1, "{names:?}");
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn within_refuses_a_directory_that_now_leads_outside_and_leaves_nothing() {
        let d = tempfile::tempdir().unwrap();
        let ws = d.path().join("ws");
        let outside = d.path().join("outside");
        std::fs::create_dir_all(ws.join("sub")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        let guard = crate::path_guard::PathGuard::new(&ws, &[]).unwrap();
        let target = guard.resolve("sub/new/deeper/f.txt").unwrap();
        write_atomic_within(&target, b"inside", &guard).unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), b"inside");
        // The checked path's directory is swapped for a symlink to outside.
        let target = guard.resolve("sub/g.txt").unwrap();
        std::fs::rename(ws.join("sub"), ws.join("parked")).unwrap();
        std::os::unix::fs::symlink(&outside, ws.join("sub")).unwrap();
        let err = write_atomic_within(&target, b"model content", &guard).unwrap_err();
        assert!(err.to_string().contains("outside the"), "{err}");
        assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0);
        // Missing directories are not made through a symlink either.
        let target = guard.resolve("parked/x/f.txt").unwrap();
        std::os::unix::fs::symlink(&outside, ws.join("parked/x")).unwrap();
        assert!(write_atomic_within(&target, b"model content", &guard).is_err());
        assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0);
    }
}
