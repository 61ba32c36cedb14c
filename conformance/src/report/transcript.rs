//! `--transcript DIR`: every check's frames and the server's stderr as JSON lines, for
//! debugging a failure frame by frame.
//!
//! One file per target and check (but the N/A ones), `DIR/<target>/<check id>.jsonl`. Each line is one object:
//! first the transcript entries in order (every entry the connection kept, frames whole up to
//! 64 KiB: not cut to the report's head and tail), `{"ms": 1.234, "direction": "send", "text": "…"}`
//! (`direction` is `send`, `receive` or `event`; `ms` counts from the start of the check;
//! each process's part is headed by an `event` line naming it), then the server's stderr lines, `{"direction": "stderr", "text": "…"}`.
//!
//! Target names and check ids come from config and scenario files, so they are reduced to
//! `[A-Za-z0-9._-]` (no path separators, no leading dot) before they become file names, and
//! names that would collide (also on a case-insensitive file system) get `-2`, `-3`, … appended.

use std::collections::HashSet;
use std::fs::{self, File};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::{direction_name, round_ms};
use crate::check::TargetReport;

/// Writes the files and returns their paths, in report order. A target with no checks (not
/// started, or skipped) gets no directory. Existing files of the same name are replaced.
pub fn write(dir: &Path, reports: &[TargetReport]) -> std::io::Result<Vec<PathBuf>> {
    let mut written = Vec::new();
    let mut target_names = HashSet::new();
    for report in reports {
        let target_dir = dir.join(unique(&mut target_names, sanitize(&report.name)));
        if report.results.is_empty() {
            continue;
        }
        fs::create_dir_all(&target_dir)?;
        let mut check_names = HashSet::new();
        // A check not applicable on the target's transport exchanged nothing: no file.
        for r in report
            .results
            .iter()
            .filter(|r| r.status != crate::check::Status::NotApplicable)
        {
            let name = unique(&mut check_names, sanitize(&r.info.id));
            let path = target_dir.join(format!("{name}.jsonl"));
            let mut out = BufWriter::new(File::create(&path)?);
            let entries = if r.whole_transcript.is_empty() {
                &r.transcript
            } else {
                &r.whole_transcript
            };
            for e in entries {
                let line = Line {
                    ms: Some(round_ms(e.at_ms)),
                    direction: direction_name(e.direction),
                    text: &e.text,
                };
                serde_json::to_writer(&mut out, &line)?;
                out.write_all(b"\n")?;
            }
            for text in &r.stderr {
                let line = Line {
                    ms: None,
                    direction: "stderr",
                    text,
                };
                serde_json::to_writer(&mut out, &line)?;
                out.write_all(b"\n")?;
            }
            // Flushed explicitly: dropping a BufWriter would swallow a write error.
            out.flush()?;
            written.push(path);
        }
    }
    Ok(written)
}

/// One line of a transcript file; a struct (not a JSON map) so the keys keep this order.
#[derive(Serialize)]
struct Line<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    ms: Option<f64>,
    direction: &'a str,
    text: &'a str,
}

/// Longest file name stem written (file systems limit names to 255 bytes).
const MAX_NAME: usize = 100;

/// A file name made of `[A-Za-z0-9._-]` only, not starting with a dot, never empty.
fn sanitize(name: &str) -> String {
    let mut out: String = name
        .chars()
        .take(MAX_NAME)
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect();
    if out.starts_with('.') {
        out.replace_range(..1, "_");
    }
    if out.is_empty() {
        out.push('_');
    }
    out
}

/// `name`, or `name-2`, `name-3`, … if taken; compared without case so that two names cannot
/// land in one file on a case-insensitive file system.
fn unique(taken: &mut HashSet<String>, name: String) -> String {
    let mut candidate = name.clone();
    let mut n = 2;
    while !taken.insert(candidate.to_ascii_lowercase()) {
        candidate = format!("{name}-{n}");
        n += 1;
    }
    candidate
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;
    use crate::report::tests::{sample, skipped, start_error};

    /// A fresh directory under the system temp dir, removed on drop.
    struct TempDir(PathBuf);

    impl TempDir {
        fn new() -> TempDir {
            static COUNTER: AtomicUsize = AtomicUsize::new(0);
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos());
            let path = std::env::temp_dir().join(format!(
                "mcp-conformance-transcript-test-{}-{nanos}-{}",
                std::process::id(),
                COUNTER.fetch_add(1, Ordering::Relaxed)
            ));
            fs::create_dir_all(&path).unwrap();
            TempDir(path)
        }
    }

    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = fs::remove_dir_all(&self.0);
        }
    }

    #[test]
    fn writes_one_file_per_check() {
        let tmp = TempDir::new();
        let dir = tmp.0.join("transcripts");
        let paths = write(&dir, &[start_error(), sample(), skipped()]).unwrap();
        let demo = dir.join("demo");
        assert_eq!(
            paths,
            [
                "zeta.custom",
                "jsonrpc.unknown-method",
                "lifecycle.ping-before-initialize",
                "framing.stdin-eof-exit",
                "framing.stderr-volume",
                "tools.list-shape",
                "tools.call-shape",
            ]
            .map(|id| demo.join(format!("{id}.jsonl")))
        );
        let text = fs::read_to_string(demo.join("jsonrpc.unknown-method.jsonl")).unwrap();
        assert_eq!(
            text,
            concat!(
                r#"{"ms":1.2,"direction":"send","text":"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"nope\"}"}"#,
                "\n",
                r#"{"ms":3.5,"direction":"receive","text":"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}"}"#,
                "\n",
                r#"{"direction":"stderr","text":"starting"}"#,
                "\n",
            )
        );
        for line in text.lines() {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            assert!(v.is_object());
        }
        // A check with nothing exchanged still gets its (empty) file.
        assert_eq!(
            fs::read_to_string(demo.join("zeta.custom.jsonl")).unwrap(),
            ""
        );
        // Targets without checks get no directory.
        assert!(!dir.join("broken").exists());
        assert!(!dir.join("remote").exists());
    }

    #[test]
    fn names_are_sanitized_and_unique() {
        let tmp = TempDir::new();
        let mut evil = sample();
        evil.name = "../evil/name".to_owned();
        evil.results.truncate(1);
        evil.results[0].info.id = "../../x".to_owned();
        evil.results.push(evil.results[0].clone());
        let mut twin = sample();
        twin.name = "DEMO".to_owned();
        twin.results.truncate(1);
        let mut first = sample();
        first.results.truncate(1);
        let paths = write(&tmp.0, &[evil, first, twin]).unwrap();
        assert_eq!(
            paths,
            vec![
                tmp.0.join("_._evil_name").join("_._.._x.jsonl"),
                tmp.0.join("_._evil_name").join("_._.._x-2.jsonl"),
                tmp.0.join("demo").join("zeta.custom.jsonl"),
                tmp.0.join("DEMO-2").join("zeta.custom.jsonl"),
            ]
        );
        for p in &paths {
            assert!(p.is_file(), "{p:?}");
            assert!(p.starts_with(&tmp.0));
        }
    }

    #[test]
    fn sanitize_rules() {
        assert_eq!(sanitize("lifecycle.ping"), "lifecycle.ping");
        assert_eq!(sanitize(""), "_");
        assert_eq!(sanitize("."), "_");
        assert_eq!(sanitize(".."), "_.");
        assert_eq!(sanitize(".hidden"), "_hidden");
        assert_eq!(sanitize("a/b\\c d:é"), "a_b_c_d__");
        assert_eq!(sanitize(&"x".repeat(300)).len(), MAX_NAME);
    }
}
