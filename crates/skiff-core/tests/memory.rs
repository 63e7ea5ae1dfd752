//! Memory files (CLAUDE.md chain, rules, AGENTS.md, imports, reminder text) and the system
//! prompt parts (environment block, replace/append), all in temp directories.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::fs;
use std::path::{Path, PathBuf};

use skiff_core::memory::{
    MAX_MEMORY_FILE_BYTES, MemoryFile, MemoryLabel, MemoryOptions, load_memory, memory_reminder,
};
use skiff_core::prompt::{
    COMPACT_SYSTEM_PROMPT, DEFAULT_SYSTEM_PROMPT, EnvironmentInfo, SystemPromptOptions,
    build_system_prompt, environment_block,
};
use tempfile::TempDir;

fn write(path: &Path, text: &str) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

/// Options with no user directories, no managed file and a fake home.
fn opts(home: &Path) -> MemoryOptions {
    MemoryOptions {
        user_dir: None,
        skiff_home: None,
        managed_file: None,
        home_dir: Some(home.to_path_buf()),
        ..MemoryOptions::default()
    }
}

/// Loaded files under `root` as (path relative to root, label, content); files of the real
/// ancestors of the temp dir (if any) are ignored.
fn load(root: &Path, cwd: &Path, opts: &MemoryOptions) -> Vec<(String, MemoryLabel, String)> {
    load_memory(cwd, opts)
        .into_iter()
        .filter_map(|f| {
            let rel = f
                .path
                .strip_prefix(root)
                .ok()?
                .to_string_lossy()
                .into_owned();
            Some((rel, f.label, f.content))
        })
        .collect()
}

fn paths(files: &[(String, MemoryLabel, String)]) -> Vec<&str> {
    files.iter().map(|(p, _, _)| p.as_str()).collect()
}

struct Fixture {
    tmp: TempDir,
}

impl Fixture {
    fn new() -> Self {
        Self {
            tmp: tempfile::tempdir().unwrap(),
        }
    }
    fn root(&self) -> &Path {
        self.tmp.path()
    }
    fn proj(&self) -> PathBuf {
        self.root().join("proj")
    }
    fn home(&self) -> PathBuf {
        self.root().join("home")
    }
    fn file(&self, rel: &str, text: &str) {
        write(&self.root().join(rel), text);
    }
    fn load(&self, cwd_rel: &str, opts: &MemoryOptions) -> Vec<(String, MemoryLabel, String)> {
        let cwd = self.root().join(cwd_rel);
        fs::create_dir_all(&cwd).unwrap();
        load(self.root(), &cwd, opts)
    }
    fn opts(&self) -> MemoryOptions {
        opts(&self.home())
    }
}

#[test]
fn order_is_root_to_cwd_with_rules_and_local_last() {
    let fx = Fixture::new();
    fx.file("proj/CLAUDE.md", "root claude");
    fx.file("proj/.claude/CLAUDE.md", "root dot-claude");
    fx.file("proj/.claude/rules/b.md", "rule b");
    fx.file(
        "proj/.claude/rules/a/z.md",
        "---\npaths:\n  - \"src/**\"\n---\n\nrule a/z",
    );
    fx.file("proj/.claude/rules/notes.txt", "not markdown");
    fx.file("proj/CLAUDE.local.md", "root local");
    fx.file("proj/sub/CLAUDE.md", "sub claude");
    fx.file("proj/sub/CLAUDE.local.md", "sub local");
    fx.file(
        "proj/sub/deeper/CLAUDE.md",
        "below cwd: not loaded at startup",
    );

    let files = fx.load("proj/sub", &fx.opts());
    assert_eq!(
        paths(&files),
        [
            "proj/CLAUDE.md",
            "proj/.claude/CLAUDE.md",
            "proj/.claude/rules/a/z.md",
            "proj/.claude/rules/b.md",
            "proj/CLAUDE.local.md",
            "proj/sub/CLAUDE.md",
            "proj/sub/CLAUDE.local.md",
        ]
    );
    let labels: Vec<MemoryLabel> = files.iter().map(|f| f.1).collect();
    use MemoryLabel::{Local, Project};
    assert_eq!(
        labels,
        [Project, Project, Project, Project, Local, Project, Local]
    );
    assert_eq!(files[2].2, "rule a/z", "frontmatter stripped");
    assert_eq!(files[0].2, "root claude");
}

#[test]
fn paths_are_absolute() {
    let fx = Fixture::new();
    fx.file("proj/CLAUDE.md", "x");
    let files = load_memory(&fx.proj(), &fx.opts());
    let file = files
        .iter()
        .find(|f| f.path.ends_with("proj/CLAUDE.md"))
        .unwrap();
    assert!(file.path.is_absolute());
    assert_eq!(file.path, fx.proj().join("CLAUDE.md"));
}

#[test]
fn agents_md_loads_only_where_there_is_no_claude_md() {
    let fx = Fixture::new();
    fx.file("proj/CLAUDE.md", "root claude");
    fx.file("proj/AGENTS.md", "root agents (shadowed)");
    fx.file("proj/a/AGENTS.md", "a agents");
    fx.file("proj/a/CLAUDE.local.md", "a local");
    fx.file("proj/a/b/.claude/CLAUDE.md", "b dot-claude");
    fx.file("proj/a/b/AGENTS.md", "b agents (shadowed)");

    let files = fx.load("proj/a/b", &fx.opts());
    assert_eq!(
        paths(&files),
        [
            "proj/CLAUDE.md",
            "proj/a/AGENTS.md",
            "proj/a/CLAUDE.local.md",
            "proj/a/b/.claude/CLAUDE.md"
        ]
    );
    assert_eq!(files[1].1, MemoryLabel::Project);

    let off = MemoryOptions {
        agents_md: false,
        ..fx.opts()
    };
    let files = fx.load("proj/a/b", &off);
    assert_eq!(
        paths(&files),
        [
            "proj/CLAUDE.md",
            "proj/a/CLAUDE.local.md",
            "proj/a/b/.claude/CLAUDE.md"
        ]
    );
}

#[test]
fn agents_md_alone_is_project_memory() {
    let fx = Fixture::new();
    fx.file("proj/AGENTS.md", "agents");
    let files = fx.load("proj", &fx.opts());
    assert_eq!(
        files,
        [(
            "proj/AGENTS.md".to_owned(),
            MemoryLabel::Project,
            "agents".to_owned()
        )]
    );
}

#[test]
fn imports_follow_their_parent_relative_nested_and_home() {
    let fx = Fixture::new();
    fx.file(
        "proj/CLAUDE.md",
        "Read @AGENTS.md and @docs/style.md.\nAlso @~/notes.md and @./missing.md\n",
    );
    fx.file("proj/AGENTS.md", "agents via import");
    fx.file("proj/docs/style.md", "style, see @nested/deep.md");
    fx.file("proj/docs/nested/deep.md", "deep");
    fx.file("home/notes.md", "home notes");
    fx.file("proj/CLAUDE.local.md", "local");

    let files = fx.load("proj", &fx.opts());
    assert_eq!(
        paths(&files),
        [
            "proj/CLAUDE.md",
            "proj/AGENTS.md",
            "proj/docs/style.md",
            "proj/docs/nested/deep.md",
            "home/notes.md",
            "proj/CLAUDE.local.md",
        ]
    );
    assert!(files[..5].iter().all(|f| f.1 == MemoryLabel::Project));
    assert_eq!(
        files[0].2,
        "Read @AGENTS.md and @docs/style.md.\nAlso @~/notes.md and @./missing.md"
    );
}

#[test]
fn imports_take_the_label_of_their_parent() {
    let fx = Fixture::new();
    fx.file("proj/CLAUDE.local.md", "@../shared.md");
    fx.file("shared.md", "shared");
    let files = fx.load("proj", &fx.opts());
    assert_eq!(paths(&files), ["proj/CLAUDE.local.md", "shared.md"]);
    assert_eq!(files[1].1, MemoryLabel::Local);
}

#[test]
fn imports_stop_after_four_hops() {
    let fx = Fixture::new();
    fx.file("proj/CLAUDE.md", "@d1.md");
    for i in 1..=6 {
        fx.file(
            &format!("proj/d{i}.md"),
            &format!("level {i} @d{}.md", i + 1),
        );
    }
    let files = fx.load("proj", &fx.opts());
    assert_eq!(
        paths(&files),
        [
            "proj/CLAUDE.md",
            "proj/d1.md",
            "proj/d2.md",
            "proj/d3.md",
            "proj/d4.md"
        ]
    );
}

#[test]
fn cycles_and_repeats_load_each_file_once() {
    let fx = Fixture::new();
    fx.file(
        "proj/CLAUDE.md",
        "@a.md @b.md @a.md @CLAUDE.md @CLAUDE.local.md",
    );
    fx.file("proj/a.md", "a imports @b.md");
    fx.file("proj/b.md", "b imports @a.md and @../proj/CLAUDE.md");
    fx.file("proj/CLAUDE.local.md", "local, imported first");
    let files = fx.load("proj", &fx.opts());
    assert_eq!(
        paths(&files),
        [
            "proj/CLAUDE.md",
            "proj/a.md",
            "proj/b.md",
            "proj/CLAUDE.local.md"
        ]
    );
    // Imported by a project file first, so it keeps that label and does not repeat as Local.
    assert_eq!(files[3].1, MemoryLabel::Project);
}

#[test]
fn missing_and_directory_imports_are_ignored() {
    let fx = Fixture::new();
    fx.file(
        "proj/CLAUDE.md",
        "@nothing.md @docs @~/absent.md @/definitely/not/here.md",
    );
    fx.file("proj/docs/x.md", "x");
    let files = fx.load("proj", &fx.opts());
    assert_eq!(paths(&files), ["proj/CLAUDE.md"]);
}

#[test]
fn code_and_emails_are_not_imports() {
    let fx = Fixture::new();
    fx.file(
        "proj/CLAUDE.md",
        "Mail me at someone@span.md or see `@span.md`.\n\
         ```sh\n@fence.md\n```\n\
         Real one: @real.md\n",
    );
    fx.file("proj/span.md", "no");
    fx.file("proj/fence.md", "no");
    fx.file("proj/real.md", "yes");
    let files = fx.load("proj", &fx.opts());
    assert_eq!(paths(&files), ["proj/CLAUDE.md", "proj/real.md"]);
}

#[test]
fn html_block_comments_are_stripped() {
    let fx = Fixture::new();
    fx.file(
        "proj/CLAUDE.md",
        "<!-- maintainer note: keep short -->\n# Rules\n\n<!--\nmulti-line\n@hidden.md\n-->\nUse tabs.\n\
         ```html\n<!-- in code: kept -->\n```\n",
    );
    fx.file(
        "proj/hidden.md",
        "must not load: the import is inside a comment",
    );
    let files = fx.load("proj", &fx.opts());
    assert_eq!(paths(&files), ["proj/CLAUDE.md"]);
    assert_eq!(
        files[0].2,
        "# Rules\n\nUse tabs.\n```html\n<!-- in code: kept -->\n```"
    );
}

#[test]
fn files_empty_after_stripping_are_left_out() {
    let fx = Fixture::new();
    fx.file("proj/CLAUDE.md", "<!-- only a comment -->\n\n");
    fx.file("proj/AGENTS.md", "shadowed by the (empty) CLAUDE.md");
    fx.file("proj/CLAUDE.local.md", "");
    assert!(fx.load("proj", &fx.opts()).is_empty());
}

#[test]
fn user_files_come_first() {
    let fx = Fixture::new();
    fx.file("home/.claude/CLAUDE.md", "claude user");
    fx.file("home/.claude/rules/b.md", "user rule b");
    fx.file("home/.claude/rules/a.md", "---\nx: 1\n---\nuser rule a");
    fx.file("home/.skiff/CLAUDE.md", "skiff user");
    fx.file("proj/CLAUDE.md", "project");
    let opts = MemoryOptions {
        user_dir: Some(fx.home().join(".claude")),
        skiff_home: Some(fx.home().join(".skiff")),
        ..fx.opts()
    };
    let files = fx.load("proj", &opts);
    assert_eq!(
        paths(&files),
        [
            "home/.claude/CLAUDE.md",
            "home/.claude/rules/a.md",
            "home/.claude/rules/b.md",
            "home/.skiff/CLAUDE.md",
            "proj/CLAUDE.md",
        ]
    );
    assert!(files[..4].iter().all(|f| f.1 == MemoryLabel::User));
    assert_eq!(files[1].2, "user rule a");
}

#[test]
fn managed_file_loads_first_when_present() {
    let fx = Fixture::new();
    fx.file("etc/claude-code/CLAUDE.md", "policy");
    fx.file("home/.claude/CLAUDE.md", "user");
    fx.file("proj/CLAUDE.md", "project");
    let opts = MemoryOptions {
        managed_file: Some(fx.root().join("etc/claude-code/CLAUDE.md")),
        user_dir: Some(fx.home().join(".claude")),
        ..fx.opts()
    };
    let files = fx.load("proj", &opts);
    assert_eq!(
        paths(&files),
        [
            "etc/claude-code/CLAUDE.md",
            "home/.claude/CLAUDE.md",
            "proj/CLAUDE.md"
        ]
    );
    assert_eq!(files[0].1, MemoryLabel::User);

    let absent = MemoryOptions {
        managed_file: Some(fx.root().join("nope/CLAUDE.md")),
        ..opts
    };
    assert_eq!(fx.load("proj", &absent).len(), 2);
}

#[test]
fn load_switches() {
    let fx = Fixture::new();
    fx.file("home/.claude/CLAUDE.md", "user");
    fx.file("proj/CLAUDE.md", "project");
    fx.file("proj/.claude/rules/r.md", "rule");
    fx.file("proj/AGENTS.md", "agents");
    fx.file("proj/sub/AGENTS.md", "sub agents");
    fx.file("proj/CLAUDE.local.md", "local");
    let base = MemoryOptions {
        user_dir: Some(fx.home().join(".claude")),
        ..fx.opts()
    };

    let all = fx.load("proj/sub", &base);
    assert_eq!(
        paths(&all),
        [
            "home/.claude/CLAUDE.md",
            "proj/CLAUDE.md",
            "proj/.claude/rules/r.md",
            "proj/CLAUDE.local.md",
            "proj/sub/AGENTS.md",
        ]
    );
    let no_user = MemoryOptions {
        load_user: false,
        ..base.clone()
    };
    assert_eq!(
        paths(&fx.load("proj/sub", &no_user)),
        [
            "proj/CLAUDE.md",
            "proj/.claude/rules/r.md",
            "proj/CLAUDE.local.md",
            "proj/sub/AGENTS.md"
        ]
    );
    let no_project = MemoryOptions {
        load_project: false,
        ..base.clone()
    };
    assert_eq!(
        paths(&fx.load("proj/sub", &no_project)),
        ["home/.claude/CLAUDE.md", "proj/CLAUDE.local.md"]
    );
    let no_local = MemoryOptions {
        load_local: false,
        ..base.clone()
    };
    assert_eq!(
        paths(&fx.load("proj/sub", &no_local)),
        [
            "home/.claude/CLAUDE.md",
            "proj/CLAUDE.md",
            "proj/.claude/rules/r.md",
            "proj/sub/AGENTS.md"
        ]
    );
    let none = MemoryOptions {
        load_user: false,
        load_project: false,
        load_local: false,
        ..base
    };
    assert!(fx.load("proj/sub", &none).is_empty());
}

#[test]
fn non_utf8_is_skipped_and_large_files_are_truncated() {
    let fx = Fixture::new();
    fs::create_dir_all(fx.proj().join(".claude")).unwrap();
    fs::write(fx.proj().join("CLAUDE.md"), b"bad \xff\xfe bytes").unwrap();
    fx.file(
        "proj/AGENTS.md",
        "shadowed: CLAUDE.md exists even though it is unusable",
    );
    // A multi-byte character straddles the cut.
    let big = format!(
        "{}é{}",
        "a".repeat(MAX_MEMORY_FILE_BYTES - 1),
        "b".repeat(1000)
    );
    fx.file("proj/.claude/CLAUDE.md", &big);

    let files = fx.load("proj", &fx.opts());
    assert_eq!(paths(&files), ["proj/.claude/CLAUDE.md"]);
    let content = &files[0].2;
    assert!(content.starts_with(&"a".repeat(MAX_MEMORY_FILE_BYTES - 1)));
    assert!(!content.contains('é') && !content.contains('b'));
    assert!(
        content.ends_with("only its first 256 KB were loaded.]"),
        "{}",
        &content[content.len() - 100..]
    );
}

#[test]
fn reminder_text_format() {
    assert_eq!(memory_reminder(&[]), None);
    let files = [
        MemoryFile {
            path: PathBuf::from("/home/u/.claude/CLAUDE.md"),
            label: MemoryLabel::User,
            content: "Be brief.".to_owned(),
        },
        MemoryFile {
            path: PathBuf::from("/p/CLAUDE.md"),
            label: MemoryLabel::Project,
            content: "# Project\nUse tabs.".to_owned(),
        },
        MemoryFile {
            path: PathBuf::from("/p/CLAUDE.local.md"),
            label: MemoryLabel::Local,
            content: "My sandbox URL.".to_owned(),
        },
    ];
    let expected = "<system-reminder>\n\
        Codebase and user instructions are shown below. Be sure to adhere to these instructions. \
        IMPORTANT: These instructions OVERRIDE any default behavior and you MUST follow them exactly as written.\n\
        \n\
        Contents of /home/u/.claude/CLAUDE.md (user's private global instructions for all projects):\n\
        \n\
        Be brief.\n\
        \n\
        Contents of /p/CLAUDE.md (project instructions, checked into the codebase):\n\
        \n\
        # Project\nUse tabs.\n\
        \n\
        Contents of /p/CLAUDE.local.md (user's private project instructions, not checked in):\n\
        \n\
        My sandbox URL.\n\
        </system-reminder>";
    assert_eq!(memory_reminder(&files).unwrap(), expected);
}

#[test]
fn label_texts() {
    assert_eq!(
        MemoryLabel::User.label_text(),
        "user's private global instructions for all projects"
    );
    assert_eq!(
        MemoryLabel::Project.label_text(),
        "project instructions, checked into the codebase"
    );
    assert_eq!(
        MemoryLabel::Local.label_text(),
        "user's private project instructions, not checked in"
    );
}

// ---- environment and system prompt ----

#[test]
fn environment_detects_branch_from_a_subdirectory() {
    let fx = Fixture::new();
    fx.file("repo/.git/HEAD", "ref: refs/heads/feature-x\n");
    fx.file("repo/src/lib.rs", "");
    let env = EnvironmentInfo::detect(&fx.root().join("repo/src"), "claude-test");
    assert!(env.is_git_repo);
    assert_eq!(env.git_branch.as_deref(), Some("feature-x"));
    assert_eq!(env.cwd, fx.root().join("repo/src"));
    assert_eq!(env.model, "claude-test");
    assert_eq!(env.platform, std::env::consts::OS);
    assert_eq!(env.date.len(), 10);
    assert_eq!(env.date.as_bytes()[4], b'-');
    if cfg!(target_os = "linux") {
        assert!(env.os_version.is_some());
    }
}

#[test]
fn environment_detached_head_has_no_branch() {
    let fx = Fixture::new();
    fx.file(
        "repo/.git/HEAD",
        "3f786850e387550fdab836ed7e6dc881de23001b\n",
    );
    let env = EnvironmentInfo::detect(&fx.root().join("repo"), "m");
    assert!(env.is_git_repo);
    assert_eq!(env.git_branch, None);
}

#[test]
fn environment_follows_worktree_gitdir_file() {
    let fx = Fixture::new();
    fx.file(
        "main/.git/worktrees/wt/HEAD",
        "ref: refs/heads/topic/nested\n",
    );
    fx.file(
        "wt/.git",
        &format!(
            "gitdir: {}\n",
            fx.root().join("main/.git/worktrees/wt").display()
        ),
    );
    let env = EnvironmentInfo::detect(&fx.root().join("wt"), "m");
    assert!(env.is_git_repo);
    assert_eq!(env.git_branch.as_deref(), Some("topic/nested"));

    fx.file("sub/.git", "gitdir: ../main/.git/worktrees/wt\n");
    let env = EnvironmentInfo::detect(&fx.root().join("sub"), "m");
    assert_eq!(env.git_branch.as_deref(), Some("topic/nested"));
}

#[test]
fn environment_outside_a_repo() {
    let fx = Fixture::new();
    let inside_real_repo = fx.root().ancestors().any(|d| d.join(".git").exists());
    let env = EnvironmentInfo::detect(fx.root(), "m");
    if !inside_real_repo {
        assert!(!env.is_git_repo);
        assert_eq!(env.git_branch, None);
    }
}

fn sample_env() -> EnvironmentInfo {
    EnvironmentInfo {
        cwd: PathBuf::from("/work/proj"),
        platform: "linux".to_owned(),
        os_version: Some("6.8.0-45-generic".to_owned()),
        date: "2026-11-22".to_owned(),
        is_git_repo: true,
        git_branch: Some("main".to_owned()),
        model: "claude-sonnet-4-5".to_owned(),
        listing: Vec::new(),
        test_command: None,
    }
}

#[test]
fn the_listing_names_visible_entries_sorted_and_at_most_forty() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("src")).unwrap();
    for f in ["b.sh", "a.md", ".env"] {
        std::fs::write(dir.path().join(f), "x").unwrap();
    }
    let env = EnvironmentInfo::detect(dir.path(), "m").with_listing();
    assert_eq!(env.listing, ["a.md", "b.sh", "src/"]);
    assert!(environment_block(&env).contains("Files here: a.md, b.sh, src/\n"));
    assert!(!environment_block(&env).contains("Tests run with"));
    std::fs::write(dir.path().join("Cargo.toml"), "").unwrap();
    let env = EnvironmentInfo::detect(dir.path(), "m").with_listing();
    assert_eq!(env.test_command.as_deref(), Some("cargo test"));
    assert!(
        environment_block(&env).contains(
            "Files here: Cargo.toml, a.md, b.sh, src/\nTests run with: cargo test\n</env>"
        )
    );
    std::fs::remove_file(dir.path().join("Cargo.toml")).unwrap();
    for i in 0..50 {
        std::fs::write(dir.path().join(format!("f{i:02}")), "x").unwrap();
    }
    let env = EnvironmentInfo::detect(dir.path(), "m").with_listing();
    assert_eq!(env.listing.len(), 41);
    assert_eq!(env.listing.last().unwrap(), "… and 13 more");
    // Without it, no line.
    let bare = EnvironmentInfo::detect(dir.path(), "m");
    assert!(!environment_block(&bare).contains("Files here"));
}

#[test]
fn environment_block_format() {
    assert_eq!(
        environment_block(&sample_env()),
        "<env>\nWorking directory: /work/proj\nIs directory a git repo: Yes\nGit branch: main\n\
         Platform: linux\nOS Version: 6.8.0-45-generic\nToday's date: 2026-11-22\n\
         Model: claude-sonnet-4-5\n</env>"
    );
    let bare = EnvironmentInfo {
        is_git_repo: false,
        git_branch: None,
        os_version: None,
        ..sample_env()
    };
    assert_eq!(
        environment_block(&bare),
        "<env>\nWorking directory: /work/proj\nIs directory a git repo: No\nPlatform: linux\n\
         Today's date: 2026-11-22\nModel: claude-sonnet-4-5\n</env>"
    );
}

#[test]
fn system_prompt_default_replace_append() {
    let env = sample_env();
    let block = environment_block(&env);

    let parts = build_system_prompt(&SystemPromptOptions::default(), &env);
    assert_eq!(parts, [DEFAULT_SYSTEM_PROMPT.to_owned(), block.clone()]);

    let append = SystemPromptOptions {
        replace: None,
        append: Some("Answer in French.".to_owned()),
        compact: false,
    };
    assert_eq!(
        build_system_prompt(&append, &env),
        [
            DEFAULT_SYSTEM_PROMPT.to_owned(),
            block.clone(),
            "Answer in French.".to_owned()
        ]
    );

    let replace = SystemPromptOptions {
        replace: Some("You are a poet.".to_owned()),
        append: None,
        compact: false,
    };
    assert_eq!(
        build_system_prompt(&replace, &env),
        ["You are a poet.".to_owned(), block.clone()]
    );

    let both = SystemPromptOptions {
        replace: Some("You are a poet.".to_owned()),
        append: Some("Rhyme.".to_owned()),
        compact: false,
    };
    assert_eq!(
        build_system_prompt(&both, &env),
        [
            "You are a poet.".to_owned(),
            block.clone(),
            "Rhyme.".to_owned()
        ]
    );

    let empty = SystemPromptOptions {
        replace: Some(String::new()),
        append: Some(String::new()),
        compact: true,
    };
    assert_eq!(
        build_system_prompt(&empty, &env),
        std::slice::from_ref(&block)
    );

    // The compact variant for small local models: the same layout, a much shorter prompt.
    let compact = SystemPromptOptions {
        compact: true,
        ..SystemPromptOptions::default()
    };
    let parts = build_system_prompt(&compact, &env);
    assert_eq!(parts, [COMPACT_SYSTEM_PROMPT.to_owned(), block]);
    assert!(COMPACT_SYSTEM_PROMPT.len() * 4 < DEFAULT_SYSTEM_PROMPT.len());
}

#[test]
fn default_prompt_is_stable() {
    let env = sample_env();
    let a = build_system_prompt(&SystemPromptOptions::default(), &env);
    let b = build_system_prompt(&SystemPromptOptions::default(), &env);
    assert_eq!(a, b);
    assert_eq!(a[0], DEFAULT_SYSTEM_PROMPT);
    assert!(
        !DEFAULT_SYSTEM_PROMPT.contains("202"),
        "no dates in the cached prompt"
    );
    for needle in [
        "Read",
        "Edit",
        "Glob",
        "Grep",
        "Bash",
        "rm -rf",
        "secrets",
        "path:line",
    ] {
        assert!(DEFAULT_SYSTEM_PROMPT.contains(needle), "{needle}");
    }
}
