//! Where the paths of a command line lead: the directories a `cd` may have left the shell in,
//! every form of a path from each of them (lexical, real, physical), and globs expanded there.

use std::path::{Path, PathBuf};

use skiff_tools::path_guard::{path_forms, physical_path};
use skiff_tools::shell::{self, Word};

/// A path a command touches, in every form it can be reached by.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathUse {
    /// The path as the command names it.
    pub written: String,
    /// Absolute forms: lexical, real (symlinks of the lexical path resolved) and physical (as
    /// the kernel walks it), from every directory the command may run in.
    pub forms: Vec<PathBuf>,
    /// Not known before the command runs (computed, or relative to a directory that is not
    /// known).
    pub unknown: bool,
}

impl PathUse {
    /// `/dev/null`, `/dev/stdout`, `/dev/stderr`, `/dev/fd/N`: no file.
    pub fn is_device_sink(&self) -> bool {
        !self.unknown && is_device_sink(&self.written)
    }
}

/// The directories the shell may be in.
#[derive(Debug, Clone)]
pub(super) enum Cwds {
    Known(Vec<PathBuf>),
    Unknown,
}

/// The paths a redirection's target names.
pub(super) fn word_paths(w: &Word, cwds: &Cwds) -> Vec<PathUse> {
    if w.is_process_substitution() {
        return Vec::new();
    }
    if w.is_dynamic() {
        return vec![PathUse {
            written: w.text.clone(),
            forms: Vec::new(),
            unknown: true,
        }];
    }
    let mut out = vec![path_use(&w.text, cwds)];
    if let Some(pattern) = &w.glob {
        match expand_glob(pattern, cwds) {
            Some(matches) => out.extend(matches.iter().map(|m| path_use(m, cwds))),
            None => {
                out[0].unknown = true;
            }
        }
    }
    out
}

/// Expand a glob from every directory the shell may be in.
pub(super) fn expand_glob(pattern: &str, cwds: &Cwds) -> Option<Vec<String>> {
    match cwds {
        Cwds::Unknown => (pattern.starts_with('/'))
            .then(|| shell::expand::expand(Path::new("/"), pattern))
            .flatten(),
        Cwds::Known(dirs) => {
            let mut all = Vec::new();
            for d in dirs {
                for m in shell::expand::expand(d, pattern)? {
                    if !all.contains(&m) {
                        all.push(m);
                    }
                }
            }
            Some(all)
        }
    }
}

/// A path in every form, from every directory the shell may be in.
pub(super) fn path_use(written: &str, cwds: &Cwds) -> PathUse {
    let mut forms = Vec::new();
    let unknown = match cwds {
        Cwds::Unknown if !written.starts_with('/') => true,
        Cwds::Unknown => {
            add_forms(Path::new("/"), written, &mut forms);
            false
        }
        Cwds::Known(dirs) => {
            for d in dirs {
                add_forms(d, written, &mut forms);
            }
            false
        }
    };
    let unknown = unknown || (forms.is_empty() && !is_device_sink(written));
    PathUse {
        written: written.to_owned(),
        forms,
        unknown,
    }
}

fn add_forms(cwd: &Path, written: &str, forms: &mut Vec<PathBuf>) {
    if let Some((lexical, real)) = path_forms(cwd, written) {
        for f in [lexical, real] {
            if !forms.contains(&f) {
                forms.push(f);
            }
        }
    }
    if let Some(physical) = physical_path(cwd, written)
        && !forms.contains(&physical)
    {
        forms.push(physical);
    }
}

/// After `cd TARGET` (or `pushd`, `popd`): where the shell may be. A `cd` can fail, so the
/// directories before stay possible.
pub(super) fn change_dir(
    cwds: &mut Cwds,
    name: &str,
    target: Option<&Word>,
    in_loop: bool,
    wrote: bool,
) {
    let Cwds::Known(dirs) = cwds else {
        return;
    };
    let static_target = target.filter(|t| t.is_static() && t.text != "-");
    let cdpath = std::env::var_os("CDPATH").is_some_and(|v| !v.is_empty());
    let Some(t) = static_target.filter(|t| {
        !in_loop
            && name != "popd"
            && (!cdpath || t.text.starts_with(['/', '.']))
            && !t.text.starts_with('-')
    }) else {
        *cwds = Cwds::Unknown;
        return;
    };
    let mut next = Vec::new();
    for d in dirs.iter() {
        // A `cd` into a directory that exists (and that nothing earlier in the line could
        // have changed) succeeds; any other may fail and leave the shell where it was.
        let physical = physical_path(d, &t.text);
        let enters = !wrote && physical.as_deref().is_some_and(enterable);
        if !enters && !next.contains(d) {
            next.push(d.clone());
        }
        if let Some((lexical, _)) = path_forms(d, &t.text)
            && !next.contains(&lexical)
        {
            next.push(lexical);
        }
        if let Some(physical) = physical
            && !next.contains(&physical)
        {
            next.push(physical);
        }
    }
    *cwds = if next.len() > 8 {
        Cwds::Unknown
    } else {
        Cwds::Known(next)
    };
}

/// A directory the shell can `cd` into.
fn enterable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_dir() && m.permissions().mode() & 0o111 == 0o111)
}

/// `/dev/null`, `/dev/stdout`, `/dev/stderr`, `/dev/fd/N`.
pub fn is_device_sink(target: &str) -> bool {
    matches!(target, "/dev/null" | "/dev/stdout" | "/dev/stderr")
        || target
            .strip_prefix("/dev/fd/")
            .is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
}
