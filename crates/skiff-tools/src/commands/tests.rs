use super::*;

fn fx(cmd: &str) -> Effects {
    let argv: Vec<String> = cmd.split_whitespace().map(str::to_owned).collect();
    effects(&argv)
}

#[test]
fn readers_only_read_their_operands_and_option_files() {
    let e = fx("cat a b");
    assert_eq!(
        (e.kind, e.reads),
        (Kind::ReadOnly, vec!["a".into(), "b".into()])
    );
    let e = fx("diff --from-file=.env /dev/null");
    assert_eq!(e.kind, Kind::ReadOnly);
    assert!(e.reads.contains(&".env".to_owned()), "{e:?}");
    let e = fx("diff --from=.env x");
    assert!(e.reads.contains(&".env".to_owned()), "{e:?}");
    let e = fx("grep -e x -f pats.txt a");
    assert_eq!(e.reads, ["pats.txt", "a"]);
    let e = fx("grep -rn KEY");
    assert_eq!(e.trees, ["."]);
    let e = fx("grep KEY .env");
    assert_eq!(e.reads, [".env"]);
    let e = fx("rg KEY sub");
    assert_eq!(e.trees, ["sub"]);
    let e = fx("head -5 -n3 f");
    assert_eq!(e.reads, ["f"]);
    assert_eq!(fx("wc --files0-from=list").reads, ["list"]);
    for cmd in [
        "sort --files0-from=-",
        "wc --files0-from -",
        "du --files0-from=-",
    ] {
        assert_eq!(fx(cmd).kind, Kind::Unknown, "{cmd}");
    }
    assert_eq!(fx("uniq -c in").kind, Kind::ReadOnly);
    assert_eq!(fx("date +%Y").kind, Kind::ReadOnly);
    assert_eq!(fx("/usr/bin/cat f").kind, Kind::Unknown);
}

#[test]
fn writing_options_in_every_spelling_are_writes() {
    for cmd in [
        "sort -o f in",
        "sort -of in",
        "sort -rof in",
        "sort --output=f in",
        "sort --output f in",
        "sort --out=f in",
        "sort --o f in",
        "sort in --outp=f",
    ] {
        let e = fx(cmd);
        assert_eq!(e.kind, Kind::Edits, "{cmd}");
        assert_eq!(e.writes, ["f"], "{cmd}");
    }
    let e = fx("uniq in out");
    assert_eq!((e.kind, e.writes), (Kind::Edits, vec!["out".into()]));
    let e = fx("tree -o out");
    assert_eq!(e.writes, ["out"]);
}

#[test]
fn programs_and_unknown_options_make_a_command_unknown() {
    for cmd in [
        "sort --compress-program=sh in",
        "sort --compress=sh in",
        "rg --pre ./x foo",
        "rg --pr=./x foo",
        "rg -z foo",
        "file -C x",
        "file -z x",
        "date -s 2020-01-01",
        "date --set=x",
        "date 010100002020",
        "diff -l a b",
        "md5sum -c list",
        "cat --frobnicate x",
        "ls --zzz",
        "env rm x",
        "printf -v PATH x",
        "test -v x",
        "./cat x",
        "bin/ls",
        "tree -R -H x",
        "npm test",
        "uniq a b c",
    ] {
        assert_eq!(fx(cmd).kind, Kind::Unknown, "{cmd}");
    }
}

#[test]
fn edits_name_every_file_they_change() {
    let e = fx("cp a --target-directory=/out");
    assert_eq!(e.kind, Kind::Edits);
    assert!(
        e.writes.contains(&"/out/a".to_owned()) && e.writes.contains(&"/out".to_owned()),
        "{e:?}"
    );
    let e = fx("cp -t/out a");
    assert!(e.writes.contains(&"/out/a".to_owned()), "{e:?}");
    let e = fx("cp a --t=/out");
    assert!(e.writes.contains(&"/out/a".to_owned()), "{e:?}");
    let e = fx("cp a lnk/../x");
    assert!(e.writes.contains(&"lnk/../x".to_owned()), "{e:?}");
    let e = fx("mv a b");
    assert!(e.writes.contains(&"a".to_owned()) && e.writes.contains(&"b".to_owned()));
    let e = fx("cp -b -S .orig a b");
    assert!(e.writes.contains(&"b.orig".to_owned()), "{e:?}");
    let e = fx("tee -a log other");
    assert_eq!(
        (e.kind, e.writes),
        (Kind::Edits, vec!["log".into(), "other".into()])
    );
    let e = fx("rm -rf dir");
    assert_eq!(e.tree_writes, ["dir"]);
    let e = fx("sed -i s/a/b/ f");
    assert_eq!((e.kind, e.writes), (Kind::Edits, vec!["f".into()]));
    let e = fx("sed -i.bak s/a/b/ f");
    assert_eq!(e.writes, ["f", "f.bak"]);
    assert_eq!(fx("sed -n 1p f").kind, Kind::ReadOnly);
    let e = effects(&["sed".into(), "-n".into(), "1e id".into(), "f".into()]);
    assert_eq!(e.kind, Kind::Unknown);
    let e = effects(&["sed".into(), "s/a/b/w /x".into(), "f".into()]);
    assert_eq!(e.kind, Kind::Unknown);
    assert_eq!(fx("sed -f script f").kind, Kind::Unknown);
    assert_eq!(fx("sed -i/tmp/* s/a/b/ f").kind, Kind::Unknown);
}
