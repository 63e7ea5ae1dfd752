//! A session's sandbox: the namespace probe, the proxy (started at the first command that
//! needs it), the allowed domains, and for each command the [`Plan`] the helper carries out
//! ([`SandboxRuntime::prepare`]) and what is checked when it ends ([`PreparedCall::finish`]).

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::domains::DomainRules;
use super::journal::{Journal, Sweep, quarantine_dir};
use super::plan::{Forward, Mounts, Plan, ProxyPlan};
use super::probe::{NamespaceSupport, Probe, ProbeCache};
use super::proxy::{CallGuard, Proxy};
use super::{HELPER_ARG, NetworkPolicy, SandboxMode, SandboxStatus, paths};

/// How long a scan of the temp directories for sockets is reused.
const SOCKET_SCAN_TTL: Duration = Duration::from_secs(2);
/// How many entries of a temp directory the socket scan looks at.
const SOCKET_SCAN_MAX: usize = 4096;
/// How many entries a `**` deny pattern's walk looks at.
const DENY_WALK_MAX: usize = 20_000;

/// The last scan for sockets outside the sandbox.
#[derive(Debug, Default)]
struct SocketScan {
    /// When, and what it found.
    last: Option<(Instant, Vec<PathBuf>)>,
    /// Which directories in the temp directories hold sockets.
    dirs: super::socket_dirs::SocketDirs,
}

/// What the configuration says about the sandbox beyond its modes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SandboxSettings {
    /// Hosts commands may reach (`sandbox.network.allowedDomains`, `WebFetch(domain:…)` allow
    /// rules): see [`super::DomainPattern`].
    pub allowed_domains: Vec<String>,
    /// Unix sockets outside the workspace that commands may reach
    /// (`sandbox.network.allowUnixSockets`).
    pub allow_unix_sockets: Vec<PathBuf>,
    /// Absolute paths, or patterns (`*`, `?`, `[…]`, `**`), commands cannot read, besides the
    /// defaults (`sandbox.filesystem.denyRead`, `Read(…)` deny rules).
    pub deny_read: Vec<String>,
    /// Absolute paths, or patterns, commands cannot change inside the directories they may
    /// write (`Edit(…)`/`Write(…)` deny rules): mounted read-only, so a link the command makes
    /// to them (`ln -s src d; echo x > d/a`) reaches a read-only file.
    pub deny_write: Vec<String>,
    /// The user's home directory.
    pub home: Option<PathBuf>,
    /// skiff's home (transcripts, trust store): hidden but for its `bin` (the git wrapper).
    pub skiff_home: Option<PathBuf>,
}

/// The sandbox state of one session.
#[derive(Debug)]
pub struct SandboxRuntime {
    helper: PathBuf,
    fs: SandboxMode,
    network: NetworkPolicy,
    settings: SandboxSettings,
    rules: Arc<DomainRules>,
    problems: Vec<String>,
    probe: Arc<Probe>,
    proxy: tokio::sync::OnceCell<Result<Arc<Proxy>, String>>,
    /// The last scan for sockets: when, what it found, and which directories hold them.
    sockets: Mutex<SocketScan>,
    deny_walked: Mutex<Option<Vec<PathBuf>>>,
    deny_write_walked: Mutex<Option<Vec<PathBuf>>>,
    journal: Option<Journal>,
    noted_fallback: AtomicBool,
    /// Starts the namespaced commands (see [`super::zygote`]).
    #[cfg(target_os = "linux")]
    zygote: super::zygote_client::ZygoteClient,
    /// What the paths looked up around each command are, for directories that did not change.
    presence: crate::presence::Presence,
}

impl SandboxRuntime {
    /// The runtime for `status` with `helper`, for commands writing under `roots`. Starts the
    /// namespace probe (unless `probe` gives the answer) and, in the background, puts away
    /// what a command of an earlier skiff that was killed left among protected paths.
    pub fn new(
        helper: PathBuf,
        status: &SandboxStatus,
        settings: SandboxSettings,
        roots: Vec<PathBuf>,
        probe: Option<Arc<Probe>>,
    ) -> Arc<Self> {
        let (rules, problems) =
            DomainRules::new(settings.allowed_domains.iter().map(String::as_str));
        let probe = probe.unwrap_or_else(|| {
            if status.filesystem == SandboxMode::Off {
                // `--sandbox off` (with `--sandbox-network deny`: seccomp only).
                Probe::known(NamespaceSupport::Unavailable(
                    "the filesystem sandbox is off".into(),
                ))
            } else {
                let cache = settings.skiff_home.as_deref().and_then(|home| {
                    ProbeCache::new(home, &helper, status.filesystem, status.network)
                });
                Probe::start(
                    helper.clone(),
                    status.filesystem,
                    status.network,
                    roots,
                    cache,
                )
            }
        });
        let journal = settings.skiff_home.as_deref().map(Journal::new);
        // A thread only when there is something to look at (a directory read here costs
        // less than starting one at every start).
        if let Some(home) = settings.skiff_home.clone()
            && Journal::any_pending(&home)
        {
            let _ = std::thread::Builder::new()
                .name("sandbox-sweep".into())
                .spawn(move || {
                    for note in Journal::sweep_stale(&home) {
                        tracing::warn!(%note, "put away what a sandboxed command of a killed skiff left");
                    }
                });
        }
        Arc::new(Self {
            #[cfg(target_os = "linux")]
            zygote: super::zygote_client::ZygoteClient::new(helper.clone(), status.network),
            presence: crate::presence::Presence::default(),
            helper,
            fs: status.filesystem,
            network: status.network,
            settings,
            rules: Arc::new(rules),
            problems,
            probe,
            proxy: tokio::sync::OnceCell::new(),
            sockets: Mutex::default(),
            deny_walked: Mutex::new(None),
            deny_write_walked: Mutex::new(None),
            journal,
            noted_fallback: AtomicBool::new(false),
        })
    }

    /// The namespace probe.
    pub fn probe(&self) -> &Arc<Probe> {
        &self.probe
    }

    /// The allowed domains (the session's grants included).
    pub fn rules(&self) -> &Arc<DomainRules> {
        &self.rules
    }

    /// Problems with the configuration (invalid domain entries), for the front end to show.
    pub fn problems(&self) -> &[String] {
        &self.problems
    }

    /// The proxy, started on first use.
    async fn proxy(&self) -> Result<Arc<Proxy>, String> {
        self.proxy
            .get_or_init(|| async {
                let dir =
                    proxy_dir().map_err(|e| format!("cannot create the proxy's directory: {e}"))?;
                Proxy::start(&dir, Arc::clone(&self.rules))
                    .map(Arc::new)
                    .map_err(|e| format!("cannot start the sandbox's network proxy: {e}"))
            })
            .await
            .clone()
    }

    /// The directories commands may write: the workspace roots, but not skiff's home (tool
    /// results saved there are shown read-only).
    fn write_roots(&self, allowed: &[PathBuf]) -> (Vec<PathBuf>, Vec<PathBuf>) {
        let home = self.settings.skiff_home.as_deref();
        allowed
            .iter()
            .cloned()
            .partition(|r| !home.is_some_and(|h| r.starts_with(h)))
    }

    /// Everything one command needs: the helper's arguments and what to check afterwards.
    /// `command` and the call's id name the command to the user when the proxy asks.
    pub async fn prepare(
        self: &Arc<Self>,
        call: CallRequest<'_>,
        command: &str,
    ) -> Result<PreparedCall, String> {
        let support = self.probe.wait().await;
        let (roots, shown_roots) = self.write_roots(call.allowed_dirs);
        if let NamespaceSupport::Unavailable(why) = support {
            let quiet = self.fs == SandboxMode::Off;
            let note = (!quiet && !self.noted_fallback.swap(true, Ordering::SeqCst)).then(|| {
                format!(
                    "(skiff sandbox: namespaces are not available here ({why}); commands run \
                     under Landlock only, so they are asked about)"
                )
            });
            let plan = Plan {
                fs: self.fs,
                write: roots,
                network: self.network,
                namespaces: None,
            };
            return Ok(PreparedCall {
                args: plan_args(&plan),
                env_remove: Vec::new(),
                env_set: Vec::new(),
                call: None,
                sweep: None,
                note,
            });
        }
        let mut mounts = Mounts::default();
        let mut sweep = Sweep::default();
        {
            let round = self.presence.round();
            for root in &roots {
                let p = crate::protected::scan(root, &round);
                mounts.pin.extend(p.pin);
                mounts.read_only.extend(p.read_only);
                sweep.absent.extend(p.absent);
                sweep.git_watch.extend(p.git_watch);
                sweep.nested.extend(p.nested);
            }
            sweep.known = mounts.read_only.clone();
            mounts.read_only.extend(
                self.deny_write_paths()
                    .into_iter()
                    .filter(|p| roots.iter().any(|r| p.starts_with(r)))
                    .filter(|p| std::fs::symlink_metadata(p).is_ok_and(|m| !m.is_symlink())),
            );
            self.hidden(&roots, &shown_roots, &mut mounts, &round);
            mounts.sockets = allowed_sockets(
                &self.settings.allow_unix_sockets,
                &super::writable_paths(self.fs, &roots),
            );
            mounts.empty = paths::EMPTY_DIRS
                .iter()
                .map(PathBuf::from)
                .filter(|d| round.is_dir(d))
                .collect();
        }
        let request = call;
        let mut call = None;
        if self.network == NetworkPolicy::Proxy {
            let proxy = self.proxy().await?;
            let guard = proxy.register(
                command,
                request.tool_use_id.map(str::to_owned),
                request.network_approver,
            );
            mounts.proxy = Some(ProxyPlan {
                socket: proxy.path().to_path_buf(),
                token: guard.token().to_owned(),
                forward: self
                    .rules
                    .forwards()
                    .into_iter()
                    .map(|(host, port)| Forward { host, port })
                    .collect(),
                connect: self.helper.clone(),
            });
            call = Some(guard);
        }
        let journal_id = self.journal.as_ref().map(|j| j.record(&sweep));
        let plan = Plan {
            fs: self.fs,
            write: roots,
            network: self.network,
            namespaces: Some(mounts),
        };
        let env_remove = paths::SOCKET_VARS
            .iter()
            .filter(|v| {
                let allowed = std::env::var_os(v)
                    .and_then(|val| paths::socket_of(v, &val.to_string_lossy()))
                    .is_some_and(|s| self.settings.allow_unix_sockets.contains(&s));
                !allowed
            })
            .map(|v| (*v).to_owned())
            .collect();
        Ok(PreparedCall {
            args: plan_args(&plan),
            env_remove,
            env_set: cache_env(),
            call,
            sweep: Some((sweep, Arc::clone(self), journal_id)),
            note: None,
        })
    }

    /// Fill in what is hidden and what is shown again inside hidden directories.
    fn hidden(
        &self,
        roots: &[PathBuf],
        shown_roots: &[PathBuf],
        mounts: &mut Mounts,
        round: &crate::presence::Round<'_>,
    ) {
        let home = self.settings.home.as_deref();
        let mut hide = paths::default_deny_read(home);
        hide.extend(self.deny_read_paths());
        let allowed = &self.settings.allow_unix_sockets;
        hide.extend(
            self.sockets()
                .into_iter()
                .filter(|s| !allowed.iter().any(|a| a.starts_with(s) || s.starts_with(a))),
        );
        let mut expose: Vec<PathBuf> = allowed.clone();
        if let Some(skiff) = &self.settings.skiff_home {
            hide.push(skiff.clone());
            expose.extend(shown_roots.iter().cloned());
        }
        // The git wrapper (made now if it is not there yet) stays visible wherever it lives.
        if let Some(dir) = crate::git_guard::wrapper_dir() {
            expose.push(dir.to_path_buf());
        }
        if let Some(home) = home {
            expose.extend(paths::SSH_EXPOSED.iter().map(|p| home.join(p)));
        }
        // Never hide a workspace root (or what holds one), nor anything that does not exist.
        hide.retain(|h| !roots.iter().any(|r| r.starts_with(h)) && round.exists(h));
        hide.sort();
        hide.dedup();
        // A path inside another hidden one is hidden already.
        let mut kept: Vec<PathBuf> = Vec::new();
        for h in hide {
            if !kept.iter().any(|k| h.starts_with(k)) {
                kept.push(h);
            }
        }
        expose.retain(|e| round.exists(e));
        expose.sort();
        expose.dedup();
        mounts.hide = kept;
        mounts.expose = expose;
    }

    /// The sockets outside the sandbox, from a scan at most [`SOCKET_SCAN_TTL`] old.
    fn sockets(&self) -> Vec<PathBuf> {
        let Ok(mut cache) = self.sockets.lock() else {
            return Vec::new();
        };
        let SocketScan { last, dirs } = &mut *cache;
        if let Some((at, list)) = last.as_ref()
            && at.elapsed() < SOCKET_SCAN_TTL
        {
            return list.clone();
        }
        let temps = super::temp_dirs();
        let own = proxy_dir().ok();
        let settled = std::time::SystemTime::now() - super::socket_dirs::SETTLED;
        let list: Vec<PathBuf> = paths::outside_sockets(
            self.settings.home.as_deref(),
            &temps,
            SOCKET_SCAN_MAX,
            dirs,
            settled,
        )
        .into_iter()
        // skiff's own directory (the proxy's socket, the sandbox's caches) stays: its
        // socket leads to the proxy, which is the sandbox's way out anyway.
        .filter(|p| own.as_ref().is_none_or(|own| !p.starts_with(own)))
        .collect();
        *last = Some((Instant::now(), list.clone()));
        list
    }

    /// The configured deny-read entries as existing paths (see [`existing_paths`]).
    fn deny_read_paths(&self) -> Vec<PathBuf> {
        existing_paths(&self.settings.deny_read, &self.deny_walked)
    }

    /// The configured deny-write entries as existing paths (see [`existing_paths`]).
    fn deny_write_paths(&self) -> Vec<PathBuf> {
        existing_paths(&self.settings.deny_write, &self.deny_write_walked)
    }
}

/// Configured path entries as existing paths: literal paths, globs in the last component
/// (listed each time), and `**` patterns (walked once per session, kept in `walked`).
fn existing_paths(entries: &[String], walked: &Mutex<Option<Vec<PathBuf>>>) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut deep = Vec::new();
    for entry in entries {
        let entry = entry
            .strip_suffix("/**")
            .or_else(|| entry.strip_suffix("/*"))
            .unwrap_or(entry);
        let globby = |s: &str| s.contains(['*', '?', '[']);
        if !globby(entry) {
            out.push(PathBuf::from(entry));
            continue;
        }
        let path = Path::new(entry);
        let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
            continue;
        };
        if globby(&parent.to_string_lossy()) {
            deep.push(entry.to_owned());
            continue;
        }
        let Ok(glob) = globset::Glob::new(&name.to_string_lossy()) else {
            continue;
        };
        let matcher = glob.compile_matcher();
        if let Ok(entries) = std::fs::read_dir(parent) {
            out.extend(
                entries
                    .flatten()
                    .filter(|e| matcher.is_match(e.file_name()))
                    .map(|e| e.path()),
            );
        }
    }
    if !deep.is_empty()
        && let Ok(mut walked) = walked.lock()
    {
        let list = walked.get_or_insert_with(|| walk_patterns(&deep));
        out.extend(list.iter().cloned());
    }
    out
}

impl Drop for SandboxRuntime {
    fn drop(&mut self) {
        if let Some(journal) = &self.journal {
            for note in journal.finish() {
                tracing::warn!(%note, "put away what a sandboxed command left");
            }
        }
    }
}

/// `[HELPER_ARG, --plan, JSON, --]`.
fn plan_args(plan: &Plan) -> Vec<OsString> {
    vec![
        HELPER_ARG.into(),
        "--plan".into(),
        plan.to_arg().into(),
        "--".into(),
    ]
}

/// Expand `**` patterns by walking from their literal prefix.
fn walk_patterns(patterns: &[String]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for pattern in patterns {
        let Ok(glob) = globset::GlobBuilder::new(pattern)
            .literal_separator(true)
            .build()
        else {
            continue;
        };
        let matcher = glob.compile_matcher();
        let prefix: PathBuf = Path::new(pattern)
            .components()
            .take_while(|c| !c.as_os_str().to_string_lossy().contains(['*', '?', '[']))
            .collect();
        if prefix.as_os_str().is_empty() || prefix == Path::new("/") {
            continue;
        }
        let walk = ignore::WalkBuilder::new(&prefix)
            .standard_filters(false)
            .max_depth(Some(12))
            .build();
        for entry in walk.flatten().take(DENY_WALK_MAX) {
            if matcher.is_match(entry.path()) {
                out.push(entry.path().to_path_buf());
            }
        }
    }
    out
}

/// Tool caches a sandboxed command can write, where the user has not chosen one: the user's own
/// (`~/.npm`, `~/.cache`, `~/go/pkg/mod`) are outside the workspace and read-only inside, and a
/// command must not fill them for the user's next build to run. A directory shared by the
/// sandboxed commands of this user, `$TMPDIR/skiff-UID/cache`.
fn cache_env() -> Vec<(String, String)> {
    const VARS: &[(&str, &str)] = &[
        ("npm_config_cache", "npm"),
        ("YARN_CACHE_FOLDER", "yarn"),
        ("XDG_CACHE_HOME", "xdg"),
        ("GOMODCACHE", "go-mod"),
    ];
    let Ok(base) = private_dir("cache") else {
        return Vec::new();
    };
    VARS.iter()
        .filter(|(var, _)| std::env::var_os(var).is_none())
        .map(|(var, dir)| {
            (
                (*var).to_owned(),
                base.join(dir).to_string_lossy().into_owned(),
            )
        })
        .collect()
}

/// `$TMPDIR/skiff-UID/NAME` (or under `/tmp` when that path is too long for a socket
/// address), made private to this user.
fn private_dir(name: &str) -> std::io::Result<PathBuf> {
    use std::os::unix::fs::DirBuilderExt;
    let dir = proxy_dir()?.join(name);
    match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
        Ok(()) => Ok(dir),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(dir),
        Err(e) => Err(e),
    }
}

/// A private directory for the proxy's socket: `$TMPDIR/skiff-UID` (or `/tmp/…`, see
/// [`proxy_base`]), mode 0700, owned by this user.
fn proxy_dir() -> std::io::Result<PathBuf> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
    let uid = nix::unistd::getuid().as_raw();
    let dir = proxy_base(std::env::temp_dir()).join(format!("skiff-{uid}"));
    match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(e),
    }
    let meta = std::fs::symlink_metadata(&dir)?;
    if !meta.is_dir() || meta.uid() != uid {
        return Err(std::io::Error::other(format!(
            "{} is not a directory of this user",
            dir.display()
        )));
    }
    if meta.mode() & 0o077 != 0 {
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700))?;
    }
    Ok(dir)
}

/// Where [`proxy_dir`] goes: the temp directory (`$TMPDIR`), or `/tmp` when that one is not
/// an absolute path to a directory (a `$TMPDIR` that does not exist would fail every sandboxed
/// command) or is too long for a socket's address.
fn proxy_base(tmp: PathBuf) -> PathBuf {
    if tmp.is_absolute() && tmp.as_os_str().len() <= 60 && tmp.is_dir() {
        tmp
    } else {
        PathBuf::from("/tmp")
    }
}

/// Who runs a command, as the sandbox needs to know it.
pub struct CallRequest<'a> {
    /// The directories the command may write (the workspace and its extra directories).
    pub allowed_dirs: &'a [PathBuf],
    /// The tool call, named to the user when the proxy asks about a host.
    pub tool_use_id: Option<&'a str>,
    /// Who is asked about a host no rule covers.
    pub network_approver: Option<Arc<dyn super::NetworkApprover>>,
}

/// One command's sandbox, prepared.
#[derive(Debug)]
pub struct PreparedCall {
    /// The helper's arguments, up to and including `--` (the shell follows).
    pub args: Vec<OsString>,
    /// Variables not passed to the command (sockets and agents outside the sandbox).
    pub env_remove: Vec<String>,
    /// Variables set for the command (tool caches it can write, see [`cache_env`]).
    pub env_set: Vec<(String, String)>,
    call: Option<CallGuard>,
    sweep: Option<(Sweep, Arc<SandboxRuntime>, Option<u64>)>,
    note: Option<String>,
}

impl PreparedCall {
    /// The helper refused to run the command because it could not set the sandbox up: a
    /// remembered probe answer must not be trusted any more.
    pub fn sandbox_failed(&self) {
        if let Some((_, runtime, _)) = &self.sweep
            && let Some(home) = runtime.settings.skiff_home.as_deref()
        {
            ProbeCache::forget(home);
        }
    }

    /// Whether everything the command starts ends with its namespace, and the namespace ends
    /// the moment skiff does (the lifeline): then the process guard has nothing to add.
    pub fn ends_with_skiff(&self) -> bool {
        #[cfg(target_os = "linux")]
        return self.sweep.is_some() && super::lifeline::available();
        #[cfg(not(target_os = "linux"))]
        return false;
    }

    /// The session's zygote, for a command in namespaces.
    #[cfg(target_os = "linux")]
    pub(crate) fn zygote(&self) -> Option<&super::zygote_client::ZygoteClient> {
        self.sweep.as_ref().map(|(_, runtime, _)| &runtime.zygote)
    }

    /// Arguments for a sandbox without a runtime (Landlock and seccomp only).
    pub fn landlock_only(fs: SandboxMode, network: NetworkPolicy, roots: &[PathBuf]) -> Self {
        Self {
            args: plan_args(&Plan {
                fs,
                write: roots.to_vec(),
                network,
                namespaces: None,
            }),
            env_remove: Vec::new(),
            env_set: Vec::new(),
            call: None,
            sweep: None,
            note: None,
        }
    }

    /// After the command (and every process it started) ended: undo what it created among
    /// protected paths (`keep` names paths skiff's own tools wrote), and say which hosts were
    /// refused. The notes for the command's result.
    pub fn finish(mut self, keep: &dyn Fn(&Path) -> bool) -> Vec<String> {
        self.take_notes(keep)
    }

    fn take_notes(&mut self, keep: &dyn Fn(&Path) -> bool) -> Vec<String> {
        let mut notes = Vec::new();
        notes.extend(self.note.take());
        if let Some((sweep, runtime, journal_id)) = self.sweep.take() {
            let quarantine = runtime.quarantine_dir();
            let swept = crate::protected::sweep(
                &sweep.absent,
                &sweep.git_watch,
                &sweep.known,
                &sweep.nested,
                &quarantine,
                keep,
                &runtime.presence.round(),
            );
            if let (Some(journal), Some(id)) = (&runtime.journal, journal_id) {
                journal.done(id);
            }
            if !swept.is_empty() {
                tracing::warn!(
                    ?swept,
                    "a sandboxed command created protected files; undone"
                );
                notes.push(crate::protected::swept_note(&swept));
            }
        }
        if let Some(call) = self.call.take() {
            let refused = call.refused();
            if !refused.is_empty() {
                let first = refused
                    .first()
                    .and_then(|h| h.rsplit_once(':'))
                    .map_or("example.com", |(h, _)| h)
                    .to_owned();
                notes.push(format!(
                    "(skiff sandbox: network access was refused for {}. Sandboxed commands reach \
                     only the domains in sandbox.network.allowedDomains. Do not try to get around \
                     the sandbox: ask the user to allow the domain, e.g. with \"sandbox\": \
                     {{\"network\": {{\"allowedDomains\": [\"{first}\"]}}}} in \
                     .claude/settings.local.json.)",
                    refused.join(", ")
                ));
            }
            let denied = call.denied();
            if !denied.is_empty() {
                notes.push(format!(
                    "(skiff sandbox: the user did not allow network access to {}.)",
                    denied.join(", ")
                ));
            }
        }
        notes
    }
}

impl Drop for PreparedCall {
    /// A call dropped before [`PreparedCall::finish`] (cancelled): its checks still run.
    fn drop(&mut self) {
        let notes = self.take_notes(&|_| false);
        if !notes.is_empty() {
            tracing::warn!(?notes, "checked a sandboxed command that was dropped");
        }
    }
}

impl SandboxRuntime {
    /// Where moved-away files go: `SKIFF_HOME/quarantine/<time>`.
    fn quarantine_dir(&self) -> PathBuf {
        quarantine_dir(self.settings.skiff_home.as_deref())
    }
}

/// The sockets `allowUnixSockets` names, as the sandbox's first process takes them
/// ([`super::sockets`]): each resolved to its file's path, but one whose own path is a
/// symbolic link in a place commands may write is left out (a command may have put that link
/// there, to another socket).
fn allowed_sockets(allowed: &[PathBuf], writable: &[PathBuf]) -> Vec<PathBuf> {
    allowed
        .iter()
        .filter_map(|p| {
            let link = std::fs::symlink_metadata(p).ok()?.is_symlink();
            if link && writable.iter().any(|w| p.starts_with(w)) {
                tracing::warn!(path = %p.display(), "allowUnixSockets: a symbolic link where commands may write; left out");
                return None;
            }
            std::fs::canonicalize(p).ok()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_proxys_directory_goes_under_tmp_when_tmpdir_is_unusable() {
        let dir = tempfile::tempdir().unwrap();
        let tmp = PathBuf::from("/tmp");
        assert_eq!(proxy_base(dir.path().to_path_buf()), dir.path());
        assert_eq!(proxy_base(dir.path().join("missing")), tmp);
        let file = dir.path().join("file");
        std::fs::write(&file, "").unwrap();
        assert_eq!(proxy_base(file), tmp);
        assert_eq!(proxy_base(PathBuf::from("relative")), tmp);
        let long = dir.path().join("d".repeat(70));
        std::fs::create_dir(&long).unwrap();
        assert_eq!(proxy_base(long), tmp);
    }
}
