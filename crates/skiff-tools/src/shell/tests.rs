use super::*;

fn commands(cmd: &str) -> Vec<SimpleCommand> {
    match analyze(cmd) {
        Shell::Commands(c) => c,
        Shell::Opaque(why) => panic!("{cmd}: opaque: {why}"),
    }
}

fn words(cmd: &str) -> Vec<Vec<String>> {
    commands(cmd).into_iter().map(|c| c.argv()).collect()
}

#[test]
fn lists_pipelines_subshells_and_substitutions_are_all_found() {
    let cases: &[(&str, &[&[&str]])] = &[
        ("true && rm x", &[&["true"], &["rm", "x"]]),
        ("echo; rm x", &[&["echo"], &["rm", "x"]]),
        ("(rm x)", &[&["rm", "x"]]),
        ("{ rm x; }", &[&["rm", "x"]]),
        ("a | b |& c", &[&["a"], &["b"], &["c"]]),
        ("a || b & c", &[&["a"], &["b"], &["c"]]),
        ("echo ok\nrm x", &[&["echo", "ok"], &["rm", "x"]]),
        (
            "ls $(rm -rf y)",
            &[&["rm", "-rf", "y"], &["ls", "$(rm -rf y)"]],
        ),
        ("echo `rm x`", &[&["rm", "x"], &["echo", "`rm x`"]]),
        ("cat <(rm x)", &[&["rm", "x"], &["cat", "<(rm x)"]]),
        ("if true; then rm x; fi", &[&["true"], &["rm", "x"]]),
        ("for f in $(ls); do rm $f; done", &[&["ls"], &["rm", "$f"]]),
        ("while false; do rm x; done", &[&["false"], &["rm", "x"]]),
        ("case $(id) in a) rm x;; esac", &[&["id"], &["rm", "x"]]),
        ("case x in $(id)) :;; esac", &[&["id"], &[":"]]),
        ("! rm x", &[&["rm", "x"]]),
        (
            "echo ${X:-$(rm y)}",
            &[&["rm", "y"], &["echo", "${X:-$(rm y)}"]],
        ),
        ("cat <<EOF\n$(rm x)\nEOF", &[&["rm", "x"], &["cat"]]),
        ("cat <<'EOF'\n$(rm x)\nEOF", &[&["cat"]]),
        (
            "for ((i=0; i<$(rm y); i++)); do :; done",
            &[&["rm", "y"], &[":"]],
        ),
        ("X=$(rm y) ls", &[&["rm", "y"], &["ls"]]),
        ("cat <<< $(rm x)", &[&["rm", "x"], &["cat"]]),
    ];
    for (cmd, expected) in cases {
        let got: Vec<Vec<String>> = words(cmd)
            .into_iter()
            .filter(|w| !w.first().is_some_and(|f| f == "((" || f == "[["))
            .collect();
        let expected: Vec<Vec<String>> = expected
            .iter()
            .map(|ws| ws.iter().map(|w| (*w).to_owned()).collect())
            .collect();
        assert_eq!(got, expected, "{cmd}");
    }
}

#[test]
fn quotes_are_removed_and_expansions_are_dynamic() {
    let c = commands(r#"FOO=1 echo "a b" 'c d' e\ f"#);
    assert_eq!(c[0].assignments[0].name, "FOO");
    assert_eq!(c[0].assignments[0].value.text, "1");
    assert_eq!(c[0].argv(), ["echo", "a b", "c d", "e f"]);
    assert!(!c[0].dynamic());
    assert!(commands("echo \"$HOME\" 'x$y'")[0].dynamic());
    let c = commands("echo 'x$y'");
    assert!(!c[0].dynamic());
    assert_eq!(c[0].argv(), ["echo", "x$y"]);
    for cmd in [
        "{rm,-f,x}",
        "$'\\x72m' -f x",
        "rm${IFS}-f x",
        "$RM -f x",
        "~/bin/rm x",
    ] {
        assert!(commands(cmd)[0].words[0].is_dynamic(), "{cmd}");
    }
    assert!(commands("/usr/bin/r[m] -f x")[0].words[0].glob.is_some());
}

#[test]
fn redirections_are_recorded() {
    let c = commands("cmd > out.txt 2>&1 < in.txt");
    let ops: Vec<RedirectOp> = c[0].redirects.iter().map(|r| r.op).collect();
    assert_eq!(
        ops,
        [RedirectOp::Write, RedirectOp::Descriptor, RedirectOp::Read]
    );
    assert_eq!(
        c[0].writes().map(|w| w.text.as_str()).collect::<Vec<_>>(),
        ["out.txt"]
    );
    let c = commands("(echo a) >> log");
    assert_eq!(c.last().unwrap().redirects[0].op, RedirectOp::Append);
    let c = commands("exec 3<> f");
    assert_eq!(c[0].redirects[0].op, RedirectOp::ReadWrite);
    let c = commands("cat <<EOF\nhi\nEOF");
    assert_eq!(c[0].redirects[0].op, RedirectOp::HereDoc);
}

#[test]
fn code_run_by_expansions_is_flagged() {
    for cmd in [
        "echo $((X))",
        "(( x++ ))",
        "[[ $x -eq 1 ]]",
        "[[ -v x ]]",
        "a[i]=1",
        "echo ${a[$i]}",
    ] {
        assert!(commands(cmd).iter().any(|c| c.runs_code.is_some()), "{cmd}");
    }
    for cmd in [
        "echo $((1 + 2))",
        "[[ 1 -eq 1 ]]",
        "[[ $x == y ]]",
        "a[0]=1",
    ] {
        assert!(commands(cmd).iter().all(|c| c.runs_code.is_none()), "{cmd}");
    }
}

#[test]
fn what_cannot_be_analysed_is_opaque() {
    for cmd in [
        "echo 'unterminated",
        "f() { rm x; }; f",
        "echo \"$(",
        "if true; then",
    ] {
        assert!(matches!(analyze(cmd), Shell::Opaque(_)), "{cmd}");
    }
}

#[test]
fn quoting_round_trips() {
    for w in ["plain", "a b", "it's", "", "$HOME", "x*y", "{a,b}", "~"] {
        let c = commands(&format!("echo {}", quote(w)));
        assert_eq!(c[0].words[1].text, w);
        assert!(c[0].words[1].is_static(), "{w}");
    }
}
