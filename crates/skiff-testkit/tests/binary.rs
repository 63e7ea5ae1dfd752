//! The `skiff-mock` binary: serves a script file, prints its URL first, rejects bad scripts.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::post_messages;
use skiff_protocol::MessageResponse;

const BIN: &str = env!("CARGO_BIN_EXE_skiff-mock");

fn script_file(contents: &str) -> tempfile::NamedTempFile {
    let mut file = tempfile::NamedTempFile::new().unwrap();
    file.write_all(contents.as_bytes()).unwrap();
    file
}

/// Kills the child on drop so a failing test leaves no process behind.
struct Child(std::process::Child);

impl Drop for Child {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[tokio::test]
async fn serves_a_script_file_and_prints_its_url_first() {
    let file = script_file(
        r#"{"model": "file-model", "turns": [{"content": [{"type": "text", "text": "from a file"}]}]}"#,
    );
    let mut child = Child(
        Command::new(BIN)
            .arg("--script")
            .arg(file.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let mut line = String::new();
    BufReader::new(child.0.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line
        .trim_end()
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("unexpected first line: {line:?}"))
        .to_owned();
    assert!(url.starts_with("http://127.0.0.1:"), "{url}");

    let resp = post_messages(&url, false).await;
    assert_eq!(resp.status(), 200);
    let msg: MessageResponse = resp.json().await.unwrap();
    assert_eq!(msg.model, "file-model");
    assert_eq!(
        post_messages(&url, false).await.status(),
        400,
        "script exhausted"
    );
}

/// Start the binary with `args`; the child and its URL.
fn start(args: &[&std::ffi::OsStr]) -> (Child, String) {
    let mut child = Child(
        Command::new(BIN)
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let mut line = String::new();
    BufReader::new(child.0.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line
        .trim_end()
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("unexpected first line: {line:?}"))
        .to_owned();
    (child, url)
}

#[tokio::test]
async fn repeat_plays_the_script_again_for_the_next_run() {
    let file = script_file(r#"{"turns": [{"content": [{"type": "text", "text": "again"}]}]}"#);
    let (_child, url) = start(&[
        "--repeat".as_ref(),
        "--script".as_ref(),
        file.path().as_os_str(),
    ]);
    for _ in 0..3 {
        let resp = post_messages(&url, false).await;
        assert_eq!(resp.status(), 200);
        let msg: MessageResponse = resp.json().await.unwrap();
        assert_eq!(msg.content.len(), 1);
    }
}

#[test]
fn exits_zero_after_the_idle_time() {
    let file = script_file(r#"{"turns": []}"#);
    let mut child = Child(
        Command::new(BIN)
            .args(["--idle-exit", "1", "--script"])
            .arg(file.path())
            .stdout(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let start = Instant::now();
    loop {
        if let Some(status) = child.0.try_wait().unwrap() {
            assert!(status.success(), "{status:?}");
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "did not exit when idle"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(start.elapsed() >= Duration::from_millis(900));
}

#[test]
fn bad_script_file_is_a_clear_error() {
    let file = script_file("{ this is not a script");
    let out = Command::new(BIN)
        .arg("--script")
        .arg(file.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&file.path().display().to_string()),
        "stderr names the file: {stderr}"
    );
    assert!(out.stdout.is_empty());

    let missing = Command::new(BIN)
        .args(["--script", "/nonexistent/script.json"])
        .output()
        .unwrap();
    assert_eq!(missing.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("/nonexistent/script.json"));
}

#[test]
fn missing_script_argument_is_a_usage_error() {
    let out = Command::new(BIN).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("usage: skiff-mock"));
}

/// The lines of a `--timeline` file: (nanoseconds, event).
fn timeline_lines(path: &std::path::Path) -> Vec<(u128, String)> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| {
            let (nanos, what) = l.split_once(' ').unwrap();
            (nanos.parse().unwrap(), what.to_owned())
        })
        .collect()
}

#[tokio::test]
async fn timeline_notes_each_arrival_and_each_streamed_answers_end() {
    let file = script_file(
        r#"{"turns": [{"delay_first_byte_ms": 60, "content": [{"type": "text", "text": "late"}]},
                      {"content": [{"type": "text", "text": "at once"}]}]}"#,
    );
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("timeline");
    let (_child, url) = start(&[
        "--script".as_ref(),
        file.path().as_os_str(),
        "--timeline".as_ref(),
        out.as_os_str(),
    ]);
    for _ in 0..2 {
        let resp = post_messages(&url, true).await;
        assert_eq!(resp.status(), 200);
        assert!(resp.text().await.unwrap().contains("message_stop"));
    }
    // The end is noted when the stream is dropped, just after the client has the last byte.
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut lines = timeline_lines(&out);
    while lines.len() < 4 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
        lines = timeline_lines(&out);
    }
    let events: Vec<&str> = lines.iter().map(|(_, what)| what.as_str()).collect();
    assert_eq!(
        events,
        [
            "request POST /v1/messages",
            "answered",
            "request POST /v1/messages",
            "answered"
        ]
    );
    let gap = |a: usize, b: usize| lines[b].0 - lines[a].0;
    assert!(gap(0, 1) >= 60_000_000, "the delayed answer: {lines:?}");
    assert!(lines.windows(2).all(|w| w[0].0 <= w[1].0), "{lines:?}");
}

#[test]
fn a_timeline_that_cannot_be_written_is_a_clear_error() {
    let file = script_file(r#"{"turns": []}"#);
    let out = Command::new(BIN)
        .arg("--script")
        .arg(file.path())
        .args(["--timeline", "/nonexistent/dir/timeline"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("cannot start"), "{stderr}");
    assert!(stderr.contains("/nonexistent/dir/timeline"), "{stderr}");
    assert!(out.stdout.is_empty());
}
