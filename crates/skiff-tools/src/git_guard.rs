//! Git without the programs a repository's own configuration names.
//!
//! `git status`, `diff`, `log` and `show` run without approval (they only read), but git runs
//! programs that `.git/config` and `.gitattributes` name: `core.fsmonitor` (on status and
//! diff), `diff.external` and `diff.<driver>.command` (diff, log -p, show),
//! `diff.<driver>.textconv`, `gpg.program` when `log.showSignature` is set, `core.pager` and
//! `pager.<cmd>`, and the `filter.<driver>` programs. A repository received from someone else
//! would get its programs run by a "read-only" command. Attributes come from outside the
//! checkout too: a `core.attributesFile` (which a repository's config can set, and which is
//! `$XDG_CONFIG_HOME/git/attributes` by default), and the `info/attributes` of a bare
//! repository committed inside the checkout, which git uses when a command runs in it.
//!
//! Commands run by the Bash tool find a `git` wrapper first on their `PATH`. It runs the real
//! git with `-c core.fsmonitor=false -c log.showSignature=false -c core.pager=cat`, no
//! attributes file (`core.attributesFile=/dev/null`) and no bare repository found by looking
//! (`safe.bareRepository=explicit`: one is used only when named with `--git-dir`), reads
//! attributes from the empty tree (`--attr-source`, so `.gitattributes` names no driver, filter
//! or textconv), and adds `--no-ext-diff --no-textconv` to `diff`, `log`, `show`, `whatchanged`
//! and `blame` (`--no-textconv` only there). `safe.directory` rules are untouched. Commands the
//! user approved get the same git: its output is the same, only repository programs do not run.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// git's empty tree: reading attributes from it means there are none.
const EMPTY_TREE: &str = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";

/// git's configuration that makes it run nothing a checkout names, for skiff's own git calls
/// on the host over a checkout a sandboxed command has touched (`skiff batch`'s add and diff):
/// no fsmonitor, no hooks, no pager, editor or external diff, no credential helper or askpass,
/// no ssh command. With [`HOST_GIT_ENV`], and `--attr-source` from [`attr_source_args`].
pub const HOST_GIT_CONFIG: &[&str] = &[
    "-c",
    "core.fsmonitor=false",
    "-c",
    "core.hooksPath=/dev/null",
    "-c",
    "core.pager=cat",
    "-c",
    "core.editor=true",
    "-c",
    "core.sshCommand=ssh",
    "-c",
    "core.askPass=",
    "-c",
    "credential.helper=",
    "-c",
    "diff.external=",
    "-c",
    "log.showSignature=false",
    "-c",
    "protocol.ext.allow=never",
    "-c",
    "core.attributesFile=/dev/null",
    "-c",
    "safe.bareRepository=explicit",
];

/// The environment of skiff's own git calls on the host: no pager, editor, askpass, external
/// diff or ssh command from the environment either.
pub const HOST_GIT_ENV: &[(&str, &str)] = &[
    ("GIT_PAGER", "cat"),
    ("GIT_EDITOR", "true"),
    ("GIT_TERMINAL_PROMPT", "0"),
    ("GIT_ASKPASS", ""),
    ("SSH_ASKPASS", ""),
];

/// Variables removed from skiff's own git calls on the host.
pub const HOST_GIT_ENV_REMOVE: &[&str] = &[
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_EXTERNAL_DIFF",
    "GIT_SSH_COMMAND",
    "GIT_SSH",
    "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_COUNT",
];

/// `--attr-source=<empty tree>` where this git supports it (2.42+): a checkout's
/// `.gitattributes` then names no filter, textconv or diff driver.
pub fn attr_source_args() -> &'static [String] {
    static ARGS: OnceLock<Vec<String>> = OnceLock::new();
    ARGS.get_or_init(|| {
        let attr = match guard() {
            Some((_, attr)) => *attr,
            None => find_real_git().is_some_and(|git| supports_attr_source(&git)),
        };
        if attr {
            vec![format!("--attr-source={EMPTY_TREE}")]
        } else {
            Vec::new()
        }
    })
}

/// The directory holding the wrapper, created once per process; `None` when git is not
/// installed or the wrapper cannot be written (then git runs as it is).
pub fn wrapper_dir() -> Option<&'static Path> {
    guard().map(|(dir, _)| dir.as_path())
}

/// The wrapper's directory and whether the wrapper passes `--attr-source`, once per process.
fn guard() -> Option<&'static (PathBuf, bool)> {
    static GUARD: OnceLock<Option<(PathBuf, bool)>> = OnceLock::new();
    GUARD
        .get_or_init(|| {
            let real = find_real_git()?;
            match write_wrapper(&real) {
                Ok(placed) => Some(placed),
                Err(e) => {
                    tracing::warn!(error = %e, "cannot write the git wrapper; git runs unguarded");
                    None
                }
            }
        })
        .as_ref()
}

/// `PATH` for a command: the wrapper's directory first.
pub fn guarded_path(path: Option<&std::ffi::OsStr>) -> Option<std::ffi::OsString> {
    let dir = wrapper_dir()?;
    let mut parts = vec![dir.to_path_buf()];
    if let Some(p) = path {
        parts.extend(std::env::split_paths(p).filter(|d| d != dir));
    }
    std::env::join_paths(parts).ok()
}

fn find_real_git() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join("git"))
        .find(|p| is_executable(p))
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Whether this git understands `--attr-source` (2.42 and later).
fn supports_attr_source(real: &Path) -> bool {
    let Ok(out) = std::process::Command::new(real).arg("--version").output() else {
        return false;
    };
    let text = String::from_utf8_lossy(&out.stdout);
    let mut nums = text
        .split_whitespace()
        .nth(2)
        .unwrap_or("")
        .split('.')
        .map(|n| n.parse::<u32>().unwrap_or(0));
    let (major, minor) = (nums.next().unwrap_or(0), nums.next().unwrap_or(0));
    (major, minor) >= (2, 42)
}

fn write_wrapper(real: &Path) -> std::io::Result<(PathBuf, bool)> {
    // In skiff's home (the user's own directory); a private temporary one without it.
    let home = std::env::var_os("SKIFF_HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|h| !h.is_empty())
                .map(|h| PathBuf::from(h).join(".skiff"))
        });
    let base = match home {
        Some(h) => h.join("bin"),
        None => std::env::temp_dir().join(format!("skiff-git-{}", std::process::id())),
    };
    let attr = place_wrapper(real, &base, supports_attr_source)?;
    Ok((base, attr))
}

/// Write the wrapper for `real` into `base` (created private) unless the one there is already
/// what would be written; returns whether it passes `--attr-source`. The wrapper names the
/// real git's identity (size, modification time, inode): while the one in `base` names the same
/// and is word for word one of the two scripts this version writes, git is not asked its
/// version again (`attr_source` runs `git --version`: 1.4 ms on every session's first Bash
/// call).
fn place_wrapper(
    real: &Path,
    base: &Path,
    attr_source: impl FnOnce(&Path) -> bool,
) -> std::io::Result<bool> {
    use std::io::Write;
    use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
    std::fs::create_dir_all(base)?;
    std::fs::set_permissions(base, std::fs::Permissions::from_mode(0o700))?;
    let meta = std::fs::metadata(real)?;
    let identity = format!(
        "{} {} {} {}",
        meta.size(),
        meta.mtime(),
        meta.mtime_nsec(),
        meta.ino()
    );
    let path = base.join("git");
    let existing = std::fs::read_to_string(&path).ok();
    for attr in [true, false] {
        if existing.as_deref() == Some(wrapper_script(real, &identity, attr).as_str()) {
            return Ok(attr);
        }
    }
    let attr = attr_source(real);
    let script = wrapper_script(real, &identity, attr);
    let tmp = base.join(format!(".git.{}.tmp", std::process::id()));
    {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o755)
            .open(&tmp)?;
        f.write_all(script.as_bytes())?;
    }
    std::fs::rename(&tmp, &path)?;
    Ok(attr)
}

/// The wrapper's text for the real git at `real` (whose identity is `identity`), passing
/// `--attr-source` when `attr`.
fn wrapper_script(real: &Path, identity: &str, attr: bool) -> String {
    let attr = if attr {
        format!("--attr-source={EMPTY_TREE} ")
    } else {
        String::new()
    };
    format!(
        r#"#!/bin/sh
# skiff's git wrapper: the real git without the programs a repository's config names.
real='{real}'
# real git: {identity}
sub=""
skip=0
for a in "$@"; do
  if [ "$skip" = 1 ]; then skip=0; continue; fi
  case "$a" in
    -c|-C|--git-dir|--work-tree|--namespace|--exec-path|--super-prefix|--config-env) skip=1 ;;
    -*) ;;
    *) sub="$a"; break ;;
  esac
done
case "$sub" in
  diff|log|show|whatchanged) extra="--no-ext-diff --no-textconv" ;;
  blame|annotate) extra="--no-textconv" ;;
  *) extra="" ;;
esac
if [ -n "$extra" ]; then
  done_sub=0
  n=$#
  i=0
  while [ "$i" -lt "$n" ]; do
    a="$1"; shift; i=$((i + 1))
    set -- "$@" "$a"
    if [ "$done_sub" = 0 ] && [ "$a" = "$sub" ]; then
      done_sub=1
      for e in $extra; do set -- "$@" "$e"; done
    fi
  done
fi
exec "$real" {attr}-c core.fsmonitor=false -c log.showSignature=false -c core.pager=cat -c core.attributesFile=/dev/null -c safe.bareRepository=explicit "$@"
"#,
        real = real.display().to_string().replace('\'', r"'\''"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    fn fake_git(dir: &Path) -> PathBuf {
        use std::os::unix::fs::PermissionsExt;
        let git = dir.join("git");
        std::fs::write(&git, "#!/bin/sh\necho git version 2.45.0\n").unwrap();
        std::fs::set_permissions(&git, std::fs::Permissions::from_mode(0o755)).unwrap();
        git
    }

    #[test]
    fn the_wrapper_is_reused_while_git_is_the_same_and_made_again_when_it_changes() {
        let dir = tempfile::tempdir().unwrap();
        let real = fake_git(dir.path());
        let base = dir.path().join("bin");
        let asked = Cell::new(0);
        let ask = |attr| {
            let asked = &asked;
            move |_: &Path| {
                asked.set(asked.get() + 1);
                attr
            }
        };
        assert!(place_wrapper(&real, &base, ask(true)).unwrap());
        assert_eq!(asked.get(), 1);
        let written = std::fs::read_to_string(base.join("git")).unwrap();
        assert!(
            written.contains(&format!("--attr-source={EMPTY_TREE} -c")),
            "{written}"
        );
        // Same git: the wrapper there is used as it is, git is not asked again.
        assert!(place_wrapper(&real, &base, ask(false)).unwrap());
        assert_eq!(asked.get(), 1);
        assert_eq!(std::fs::read_to_string(base.join("git")).unwrap(), written);
        // A wrapper changed by someone else is written again (and git asked).
        std::fs::write(
            base.join("git"),
            written.replace("core.pager=cat", "core.pager=evil"),
        )
        .unwrap();
        assert!(!place_wrapper(&real, &base, ask(false)).unwrap());
        assert_eq!(asked.get(), 2);
        let rewritten = std::fs::read_to_string(base.join("git")).unwrap();
        assert!(!rewritten.contains("evil") && !rewritten.contains("--attr-source"));
        // Another git (a new build in the same place): asked again.
        std::fs::write(&real, "#!/bin/sh\necho git version 2.30.0\n# longer\n").unwrap();
        assert!(place_wrapper(&real, &base, ask(true)).unwrap());
        assert_eq!(asked.get(), 3);
    }

    #[test]
    fn the_real_git_is_quoted_in_the_wrapper() {
        let script = wrapper_script(Path::new("/opt/it's/git"), "1 2 3 4", false);
        assert!(script.contains(r"real='/opt/it'\''s/git'"), "{script}");
        assert!(script.contains("# real git: 1 2 3 4\n"));
    }
}
