//! Every bypass of issue 31, and the ones found while closing them: each must not run without
//! asking, with and without the sandbox's auto-allow (`Bash` allowed).

use super::*;

/// The engines a deny rule must hold in: rules alone, and with every command auto-allowed.
fn both(f: &Fixture, allow: &[&str], ask: &[&str], deny: &[&str]) -> [PermissionEngine; 2] {
    let mut with_bash = allow.to_vec();
    with_bash.push("Bash");
    [f.engine(allow, ask, deny), f.engine(&with_bash, ask, deny)]
}

fn never_allowed(engines: &[PermissionEngine], modes: &[PermissionMode], cmds: &[&str]) {
    for (i, e) in engines.iter().enumerate() {
        for mode in modes {
            for cmd in cmds {
                let d = bash(e, *mode, cmd);
                assert!(!is_allow(&d), "engine {i}, {mode}: {cmd:?} was allowed");
            }
        }
    }
}

const ALL_MODES: &[PermissionMode] = &[Dflt, AcceptEdits, Plan, BypassPermissions, DontAsk];

#[test]
fn dynamic_words_cannot_hide_a_denied_command() {
    let f = fixture();
    let engines = both(&f, &[], &[], &["Bash(rm:*)"]);
    never_allowed(
        &engines,
        ALL_MODES,
        &[
            "{rm,-f,x}",
            "exec -a x rm -f x",
            "alias x=rm; x -f y",
            "shopt -s expand_aliases\\nalias x=rm\\nx -f y",
            "$'\\x72m' -f x",
            "rm${IFS}-f x",
            "/usr/bin/r[m] -f x",
            "RM=rm; $RM -f x",
            "find . -delete",
            "find . -name x -delete",
            "$(echo rm) x",
            "`echo rm` x",
            "${X:-rm} x",
            "r$'m' x",
            "\"r\"m x",
            "/usr/bin/$X x",
            "hash -p /usr/bin/rm ls; ls x",
            "PATH=/tmp; ls",
            "source ./script; ls",
            "! . ./script $'\\x2eenv'",
            ". ./script",
            "trap 'rm x' EXIT",
            "eval \"$CMD\"",
            "bash -c \"$CMD\"",
            "x='a[$(rm y)]'; echo $((x))",
            "x='a[$(rm y)]'; [[ $x -eq 1 ]]",
            "read 'a[$(rm y)]' <<< 1",
            "printf -v 'a[$(rm y)]' x",
            "X='$(rm y)'; echo ${X@P}",
            "env -S 'rm x'",
            "setsid rm x",
            "flock /tmp/l rm x",
            "./timeout 5 rm x",
            "cat <<EOF\\n$(rm x)\\nEOF",
            "case x in $(rm y)) ;; esac",
            "for ((i=0; i<$(rm y); i++)); do :; done",
            "xargs -I{} rm {} < list",
            "f() { ls; }; f",
            "unlink_and_rm() { rm x; }",
            "command rm x",
            "builtin exec rm x",
            "nice -n1 rm x",
            "sudo -u root rm x",
        ]
        .map(|c| c.replace("\\n", "\n"))
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>(),
    );
    // Plain commands around them still run.
    let e = f.engine(&["Bash"], &[], &["Bash(rm:*)"]);
    for cmd in [
        "echo rm",
        "ls",
        "git status",
        "echo $HOME",
        "rmdir x",
        "npm test",
    ] {
        assert!(is_allow(&bash(&e, Dflt, cmd)), "{cmd}");
    }
    // What is certain is denied outright.
    for cmd in [
        "exec -a x rm -f x",
        "find . -delete",
        "/usr/bin/r[m] -f x",
        "command rm x",
    ] {
        assert!(is_deny(&bash(&e, Dflt, cmd)), "{cmd}");
    }
}

#[test]
fn reads_through_bash_obey_read_rules() {
    let f = fixture();
    let engines = both(&f, &[], &[], &["Read(./.env)"]);
    for (i, e) in engines.iter().enumerate() {
        for cmd in [
            "cat < .env",
            "cat .e*",
            "cat .en?",
            "cat .[e]nv",
            "diff --from-file=.env /dev/null",
            "diff --from=.env a.txt",
            "diff .env a.txt",
            "grep -f .env a.txt",
            "grep --file=.env a.txt",
            "wc --files0-from=.env",
            "sort --random-source=.env a.txt",
            "cat 0<>.env",
            "echo $(< .env)",
            "cat sub/../.env",
            "cat innocent",
            "cd sub && cat ../.env",
            "git show HEAD:.env",
            "tee a.txt < .env",
            "sed -n p .env",
            "cp .env x",
        ] {
            let d = bash(e, BypassPermissions, cmd);
            assert!(is_deny(&d), "engine {i}: {cmd}: {d:?}");
        }
        for cmd in ["cat $F", "cat ~/.env", "source .env", "xargs cat < list"] {
            assert!(
                !is_allow(&bash(e, BypassPermissions, cmd)),
                "engine {i}: {cmd}"
            );
        }
    }
}

#[test]
fn writes_through_bash_obey_edit_rules() {
    let f = fixture();
    let engines = both(&f, &[], &[], &["Edit(./a.txt)"]);
    for (i, e) in engines.iter().enumerate() {
        for cmd in [
            "sed -i s/x/y/ a.txt",
            "sed --in-place s/x/y/ a.txt",
            "cp sub/x a.txt",
            "cp sub/a.txt --target-directory=.",
            "tee a.txt",
            "echo x | tee -a ./a.txt",
            "echo > a.txt",
            "echo >> sub/../a.txt",
            "sort -o a.txt b",
            "sort --out=a.txt b",
            "uniq b a.txt",
            "mv b a.txt",
            "mv a.txt b",
            "rm a.txt",
            "touch a.txt",
            "cat b 1<>a.txt",
        ] {
            let d = bash(e, BypassPermissions, cmd);
            assert!(is_deny(&d), "engine {i}: {cmd}: {d:?}");
        }
        // Removing the directory that holds it, or a target computed at run time, asks.
        for cmd in ["rm -rf .", "echo > $F", "cp b $D", "find . -delete"] {
            let d = bash(e, BypassPermissions, cmd);
            assert!(!is_allow(&d), "engine {i}: {cmd}: {d:?}");
        }
    }
}

#[test]
fn plan_mode_runs_nothing_that_writes_or_runs_programs() {
    let f = fixture();
    let e = f.engine(&[], &[], &[]);
    for cmd in [
        "sort --out=f a.txt",
        "sort --o f a.txt",
        "sort -of a.txt",
        "sort -rof a.txt",
        "sort --compress-program=sh a.txt",
        "git log --show-signature",
        "git log --show-sig",
        "git show --textconv HEAD",
        "git diff --ext-diff",
        "git log --format=%G?",
        "git log --pretty=format:%GG",
        "git -c core.pager=x log",
        "git diff --output=f",
        "git log --out=f",
        "find . -fprint f",
        "find . -exec ls ;",
        "find . -delete",
        "sed -n '1e id' a.txt",
        "sed 's/a/b/w f' a.txt",
        "sed -i s/a/b/ a.txt",
        "tree -o f",
        "uniq a.txt f",
        "date -s 2020-01-01",
        "echo hi > f",
        "cat a.txt | tee f",
        "rg --pre ./x foo",
        "file -C a.txt",
        "diff -l a.txt a.txt",
    ] {
        let d = bash(&e, Plan, cmd);
        assert!(is_deny(&d), "{cmd}: {d:?}");
    }
    for cmd in [
        "sort a.txt",
        "sort -r -k2 a.txt",
        "git log --oneline -n 5",
        "git diff HEAD -- a.txt",
        "sed -n 1,5p a.txt",
        "find . -name '*.rs' -type f",
        "grep -rn foo .",
        "cat a.txt | sort | uniq -c",
        "ls -la sub",
        "diff a.txt a.txt",
    ] {
        let d = bash(&e, Plan, cmd);
        assert!(is_allow(&d), "{cmd}: {d:?}");
    }
}

#[test]
fn accept_edits_changes_only_files_inside_and_runs_no_program() {
    let f = fixture();
    let e = f.engine(&[], &[], &[]);
    let out = f.outside.display().to_string();
    for cmd in [
        "sed -n '1e touch pwned' a.txt".to_owned(),
        format!("sed 's/a/b/w {out}/x' a.txt"),
        format!("cp a.txt --target-directory={out}"),
        format!("cp -t{out} a.txt"),
        format!("cp a.txt --t={out}"),
        "cp a.txt lnk/../x".to_owned(),
        "mv a.txt lnk/../x".to_owned(),
        "touch lnk/../x".to_owned(),
        "echo x > lnk/../x".to_owned(),
        "cd .. && rm -rf ws".to_owned(),
        "cd lnk && touch x".to_owned(),
        "cd sub; cd ..; cd ..; rm -rf x".to_owned(),
        "cd $D && rm x".to_owned(),
        "for d in a b; do cd ..; done; rm x".to_owned(),
        "rm -rf .".to_owned(),
        "rm -rf sub/..".to_owned(),
        "cp -rT out .".to_owned(),
        "sed -i.orig s/a/b/ .bashrc".to_owned(),
        "sed -i s/a/b/ .git/config".to_owned(),
        "tee .git/hooks/pre-commit".to_owned(),
        "mkdir -p .git/hooks".to_owned(),
        "sed -f script a.txt".to_owned(),
        "cp a.txt $X".to_owned(),
        // Links made, then written through (found by red-teaming the CLI).
        "cp -s .git/config gc && echo x >> gc".to_owned(),
        "cp -rs .git/hooks h".to_owned(),
        format!("cp -l {out}/f x && echo x > x"),
        "cp --symbolic-link a.txt l".to_owned(),
        "ln -s .git g && echo x > g/config".to_owned(),
    ] {
        let d = bash(&e, AcceptEdits, &cmd);
        assert!(is_ask(&d), "{cmd}: {d:?}");
    }
    for cmd in [
        "sed -i s/a/b/ a.txt",
        "cp a.txt sub/",
        "cp -t sub a.txt",
        "cd sub && touch x && cd .. && rm a.txt",
        "tee sub/log < a.txt",
        "mkdir -p sub/a/b && mv a.txt sub/a/b/",
        "sort -o sub/sorted a.txt",
        "rm -rf sub",
    ] {
        let d = bash(&e, AcceptEdits, cmd);
        assert!(is_allow(&d), "{cmd}: {d:?}");
    }
}

#[test]
fn reads_outside_the_workspace_ask() {
    let f = fixture();
    let e = f.engine(&[], &[], &[]);
    for cmd in [
        "cat < ~/f",
        "cat ~/f",
        "git diff --no-index ~/f /dev/null",
        "git diff --no-index ../outside/secret /dev/null",
        "cat lnk/../secret",
        "cat < lnk/../secret",
        "cd lnk/.. && cat secret",
        "cd .. && cat outside/secret",
        "cat out/*",
        "head -n1 /etc/*",
        "grep -r x ..",
        "diff -r . ..",
    ] {
        let d = bash(&e, Dflt, cmd);
        assert!(is_ask(&d), "{cmd}: {d:?}");
    }
}

#[test]
fn ask_rules_hold_for_what_is_computed_at_run_time() {
    let f = fixture();
    let e = f.engine(&["Bash"], &["Bash(git push:*)"], &[]);
    for cmd in [
        "git push",
        "git $SUB",
        "g$X push",
        "$GIT push",
        "{git,push}",
        "echo x && git pu$'s'h",
    ] {
        let d = bash(&e, BypassPermissions, cmd);
        assert!(is_ask(&d), "{cmd}: {d:?}");
    }
    assert!(is_allow(&bash(&e, BypassPermissions, "git status $X")));
    assert!(is_allow(&bash(&e, Dflt, "git status")));
}

/// Found by red-teaming the CLI: a deny rule written one way held against other spellings of
/// the same command (options reordered, split, long; git's global options before the
/// subcommand).
#[test]
fn other_spellings_of_a_denied_command_are_denied() {
    let f = fixture();
    let engines = both(
        &f,
        &["Bash(git:*)", "Bash(rm:*)"],
        &["Bash(git reset --hard:*)"],
        &["Bash(rm -rf:*)", "Bash(git push:*)"],
    );
    for (i, e) in engines.iter().enumerate() {
        for mode in ALL_MODES {
            for cmd in [
                "rm -fr src",
                "rm -r -f src",
                "rm -Rf src",
                "rm --recursive --force src",
                "rm src -rf",
                "git --no-pager push origin HEAD",
                "git -C . push origin HEAD",
                "git -c color.ui=never push origin HEAD",
                "git -c alias.zz=push zz origin HEAD",
                "git --git-dir=.git push",
            ] {
                let d = bash(e, *mode, cmd);
                assert!(is_deny(&d), "engine {i}, {mode}: {cmd:?} gave {d:?}");
            }
            let d = bash(e, *mode, "git -C . reset --hard HEAD~1");
            assert!(!is_allow(&d), "engine {i}, {mode}: reset --hard gave {d:?}");
        }
        // What the rules do not name still runs.
        for cmd in ["rm -f x", "git -C . status"] {
            let d = bash(e, Dflt, cmd);
            assert!(is_allow(&d), "engine {i}: {cmd:?} gave {d:?}");
        }
    }
}

/// Found by red-teaming the CLI: an allow rule for an exact command did not cover the same
/// command with an environment that names a program to run (git's configuration from
/// `$XDG_CONFIG_HOME`, npm's `node-options` and `script-shell`, cargo's runners and wrappers).
#[test]
fn an_environment_that_names_programs_is_not_what_an_allow_rule_allows() {
    let f = fixture();
    let e = f.engine(
        &["Bash(git diff:*)", "Bash(npm test)", "Bash(cargo test:*)"],
        &[],
        &[],
    );
    for cmd in [
        "XDG_CONFIG_HOME=cfg git diff --stat",
        "npm_config_node_options=--import=x npm test",
        "NPM_CONFIG_SCRIPT_SHELL=./evil npm test",
        "CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUNNER=./evil cargo test",
        "RUSTC_WRAPPER=./evil cargo test",
        "RUSTFLAGS=-Clinker=./evil cargo test",
    ] {
        for mode in [Dflt, AcceptEdits] {
            let d = bash(&e, mode, cmd);
            assert!(!is_allow(&d), "{mode}: {cmd:?} was allowed");
        }
    }
    for cmd in ["git diff --stat", "npm test", "RUST_LOG=debug cargo test"] {
        assert!(is_allow(&bash(&e, Dflt, cmd)), "{cmd}");
    }
}

/// Found by red-teaming the CLI: a link made earlier in the same line reaches a path the
/// checks did not see (`ln -s secrets d && cat d/key`): with Read or Edit deny rules, such a
/// line asks, also where every command is allowed and in `bypassPermissions` (the sandbox, when
/// on, hides and mounts read-only what those rules cover as well).
#[test]
fn a_link_made_in_the_same_line_asks_where_path_rules_exist() {
    let f = fixture();
    let engines = both(&f, &[], &[], &["Read(./secrets/**)", "Edit(./src/**)"]);
    never_allowed(
        &engines,
        ALL_MODES,
        &[
            "ln -s secrets d && cat d/key.txt",
            "ln -s src d; echo x > d/a.txt",
            "cp -rs src d && echo x > d/a.txt",
            "link src/a.txt b; echo x > b",
        ],
    );
    // Without path rules, a link is an ordinary command.
    let e = f.engine(&["Bash"], &[], &[]);
    assert!(is_allow(&bash(&e, Dflt, "ln -s a b && cat b")));
}

#[test]
fn git_history_of_a_read_denied_file_asks() {
    let f = fixture();
    for rule in ["Read(./secrets/**)", "Read(**/.env)"] {
        let engines = both(&f, &["Bash(git:*)"], &[], &[rule]);
        never_allowed(
            &engines,
            ALL_MODES,
            &[
                "git show",
                "git show HEAD",
                "git show --stat 3f2a9c1",
                "git log -p",
                "git log -1 --patch",
                "git --no-pager log -p -- .",
                "git log -Ssecret",
                "git whatchanged -p",
                "git diff",
                "git diff HEAD~3",
                "git diff --cached",
                "git diff --stat -p",
                "git cat-file -p 1234abcd",
                "git cat-file blob 1234abcd",
                "git grep -n secret HEAD",
                "git archive HEAD",
                "git bundle create /tmp/b HEAD",
                "git format-patch -1 -o /tmp/p",
                "git clone . /tmp/copy",
                "git worktree add /tmp/wt",
                "git stash show -p",
                "git add -p",
                "git commit -v",
                "git -c alias.v=show v HEAD",
                "git st",
                "git -C /tmp/copy checkout main",
                "git --work-tree=/tmp/x checkout HEAD -- .",
                "cd /tmp/copy && git checkout main",
                "GIT_WORK_TREE=/tmp/x git checkout HEAD -- .",
                "git -c core.worktree=/tmp/x reset --hard",
            ],
        );
    }
    // What only names files, commits and refs stays allowed; so does everything where the
    // Read rules cover nothing the repository can hold.
    for (rules, cmds) in [
        (
            &["Read(./secrets/**)"][..],
            &[
                "git status",
                "git log --oneline -5",
                "git log --stat",
                "git diff --stat",
                "git diff --name-only HEAD~1",
                "git show --stat HEAD",
                "git show -s --format=%H HEAD~2",
                "git branch -a",
                "git ls-files",
                "git cat-file -t HEAD",
                "git add -A",
                "git commit -am 'fix'",
                "git checkout -b topic",
            ][..],
        ),
        (
            &["Read(~/.aws/**)", "Read(//etc/shadow)"][..],
            &[
                "git show",
                "git log -p",
                "git diff",
                "git clone . /tmp/copy",
            ][..],
        ),
    ] {
        let e = f.engine(&["Bash(git:*)"], &[], rules);
        for cmd in cmds {
            assert!(
                is_allow(&bash(&e, Dflt, cmd)),
                "{rules:?}: {cmd:?} was not allowed"
            );
        }
    }
}
