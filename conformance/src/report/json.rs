//! The JSON report (`--format json`): one document for the whole run.
//!
//! # Schema `mcp-conformance/report/v1`
//!
//! Stable: within `v1` fields may be added, but none is removed, renamed or given another type;
//! such a change gets a new `schema` string. The order of keys in an object is not significant.
//! Durations and timestamps are milliseconds as numbers with up to three decimals.
//!
//! ```json
//! {
//!   "schema": "mcp-conformance/report/v1",
//!   "tool": { "name": "mcp-conformance", "version": "0.1.0" },
//!   "checkSet": "0.1.0",
//!   "targets": [
//!     {
//!       "name": "echo",
//!       "command": "mcp-echo-server",
//!       "framing": "ndjson",
//!       "profile": "echo",
//!       "serverInfo": { "name": "mcp-echo-server", "version": "0.1.0" },
//!       "eras": ["legacy", "modern"],
//!       "startError": null,
//!       "skipped": null,
//!       "durationMs": 1520.25,
//!       "summary": { "pass": 40, "fail": 0, "warn": 0, "info": 2, "skip": 0, "expectedFail": 0,
//!                    "blocked": 0, "notApplicable": 0 },
//!       "failed": false,
//!       "staleExpectedFailures": [],
//!       "starts": { "count": 11, "answered": 11, "firstMs": 912.4, "medianMs": 880.1,
//!                   "slowestMs": 1203.9 },
//!       "findings": [],
//!       "coverage": [ { "capability": "tools", "era": "legacy", "declared": true, "ran": 6,
//!                       "passed": 5, "failed": 0, "info": 1, "notRun": 0, "reasons": [] } ],
//!       "checks": [
//!         {
//!           "id": "lifecycle.ping-before-initialize",
//!           "level": "MUST",
//!           "since": "0.1.0",
//!           "area": "lifecycle",
//!           "description": "…",
//!           "spec": "…",
//!           "status": "PASS",
//!           "expectedFailure": false,
//!           "durationMs": 3.5,
//!           "expected": null,
//!           "actual": null,
//!           "detail": "answered with an empty result",
//!           "blockedBy": null,
//!           "brokeSession": null,
//!           "transcript": [ { "ms": 0.4, "direction": "send", "text": "{…}" } ],
//!           "stderr": []
//!         }
//!       ]
//!     }
//!   ],
//!   "failed": false
//! }
//! ```
//!
//! Top level:
//! - `schema` (string): always `"mcp-conformance/report/v1"` for this layout.
//! - `tool` (object): `name` (`"mcp-conformance"`) and `version` of the harness that wrote it.
//! - `checkSet` (string): the check set the run used: `--check-set`, else the harness version.
//! - `targets` (array): one object per server tested, in the order they were given.
//! - `failed` (bool): true if any target's `failed` is true; the run's exit code is then not 0.
//!
//! A target:
//! - `name` (string): the name from the config file; for a command line, the server's own
//!   `serverInfo.name`, else the package or script the command runs (`@scope/server`,
//!   `server.py`).
//! - `command` (string): the command that was run, with its arguments.
//! - `framing` (string): `"ndjson"` or `"content-length"` (stdio), or `"http"` (`--url`).
//! - `profile` (string): `"generic"`, `"strict"` or `"echo"`.
//! - `serverInfo` (object or null): `serverInfo` from the server's `initialize` result, as
//!   sent; for a server that answers no `initialize`, the `io.modelcontextprotocol/serverInfo`
//!   of its `server/discover` result's `_meta`; null if neither gave one.
//! - `eras` (array of strings): the protocol eras the server speaks, found once before the
//!   checks ran (the `era.detect` check reports how): `"legacy"` if `initialize` got a result,
//!   `"modern"` if `server/discover` carrying 2026-07-28 `_meta` got a DiscoverResult or an
//!   `UnsupportedProtocolVersionError` (-32022); in that order, so a dual-era server has
//!   `["legacy", "modern"]`. Empty if it spoke neither (or its start-up replies could not be
//!   read: see `findings`), and for a target that could not be started or was skipped. `modern.*` checks are SKIPs unless the server accepts 2026-07-28,
//!   and checks that need a legacy session are SKIPs against a modern-only server.
//! - `startError` (string or null): why the server could not be started: it answered neither
//!   `initialize` nor `server/discover` (it exited, said nothing, or wrote no JSON-RPC reply),
//!   with a sample of its stdout and its last stderr lines; then `checks` is empty and
//!   `failed` is true (exit code 3).
//! - `skipped` (string or null): why the entry was not tested (e.g. an HTTP server in a config
//!   file); then `checks` is empty and `failed` is false.
//! - `durationMs` (number): time spent on the target.
//! - `summary` (object): how many checks ended in each way: `pass`, `fail` (unexpected FAILs
//!   only), `warn`, `info`, `skip`, `expectedFail` (FAILs listed in `--expected-failures`),
//!   `blocked`. The seven add up to the length of `checks`.
//! - `failed` (bool): true if a check FAILed unexpectedly, an expected failure is stale, or the
//!   server could not be started.
//! - `staleExpectedFailures` (array of strings): check ids listed in `--expected-failures`
//!   that no longer fail; they fail the run until they are removed from the file.
//! - `starts` (object): the server processes the run started: `count`, how many of them
//!   `answered` anything, and the time from spawn to the first reply of the first start
//!   (`firstMs`), the median one (`medianMs`) and the slowest (`slowestMs`), null if none
//!   answered.
//! - `findings` (array): root causes, replies that arrived but could not be matched to their
//!   requests or did not come, each once: `kind` (`id-form`: an id equal by value only, `1.0`
//!   for `1`, matched leniently so the run goes on; `spread-over-lines`: one message over
//!   several lines; `other-framing`: replies in the framing the harness does not speak;
//!   `no-id`: a reply without the id its request had; `unknown-id`: replies under ids no
//!   request had, one for each request still waiting; `silent-start`: a process that answered
//!   nothing within `--start-timeout` though an earlier one answered; `stops-answering`: after
//!   the handshake, waits for replies ran out in two processes, so the checks that would wait
//!   for one were not run), `owner` (the check whose rule it breaks, which FAILs with the
//!   frames; for `stops-answering`, the first check that failed on it), `seenIn` (the check
//!   that met it first), `actual` (what was seen) and `count` (how often; for
//!   `stops-answering`, in how many processes).
//! - `coverage` (array): per era the server speaks (`legacy`, then `modern`) and server
//!   capability (`tools`, `resources`, `resources.subscribe`, `prompts`, `logging`,
//!   `completions`): `capability`, `era`, `declared` (bool: in that era's `initialize` or
//!   `server/discover` result), and of the checks that exercise it in that era, how many `ran`
//!   to a verdict (`passed`, `failed`: FAIL or WARN, `info`) and how many did not (`notRun`:
//!   skipped, blocked or not applicable) with their distinct `reasons` (array of strings).
//! - `checks` (array): one object per check, in report order (the order `--list` shows).
//!
//! A check:
//! - `id` (string): the stable check id, `area.name`.
//! - `level` (string): `"MUST"`, `"SHOULD"` or `"INFO"`.
//! - `since` (string): the harness version that added the check (see `--check-set`).
//! - `area` (string): the part of `id` before the first dot.
//! - `description` (string): one line, what the server must do.
//! - `spec` (string): the spec page and section (or JSON-RPC 2.0 section) it comes from.
//! - `status` (string): `"PASS"`, `"FAIL"`, `"WARN"` (a SHOULD not met under the generic
//!   profile), `"INFO"` (an observation; never fails), `"SKIP"` (does not apply) or
//!   `"BLOCKED"` (could not be judged: a reply it waited for could not be read, for a reason
//!   another check owns and fails; never a failure of its own) or `"N/A"` (not applicable on
//!   the target's transport: a stdio-only check over Streamable HTTP, an `http.*` check over
//!   stdio; `detail` says why; never run, never a failure).
//! - `expectedFailure` (bool): the check is listed in `--expected-failures`; a `"FAIL"` with
//!   this set does not fail the run.
//! - `durationMs` (number): time the check took.
//! - `expected` (string or null): what the server should have done; set only when the check
//!   found a failure (status `"FAIL"` or `"WARN"`, or `"INFO"` for an INFO-level check).
//! - `actual` (string or null): what came back instead; set exactly when `expected` is.
//! - `detail` (string or null): for a check that found no failure, what was observed (a
//!   `"PASS"` or `"INFO"`, possibly empty), why it was skipped (`"SKIP"`) or why it could not
//!   be judged (`"BLOCKED"`); null when `expected` is set.
//! - `blockedBy` (string or null): for a `"BLOCKED"` check, the id of the check that owns the
//!   reason.
//! - `brokeSession` (string or null): the check ran in a shared session, and the session broke
//!   during it (the server exited, or stopped answering); the checks after it got a new one.
//! - `transcript` (array): every frame exchanged by the check's server processes, in order,
//!   each process's part headed by an `"event"` entry that names it (`<own process, pid 12>`,
//!   `<shared legacy session, pid 9>`): `ms` (number, since the check started), `direction`
//!   (`"send"`: written to the
//!   server's stdin; `"receive"`: a frame or invalid bytes read from its stdout; `"event"`:
//!   something the harness did or saw, such as stdin closed, a signal or the exit) and `text`
//!   (the frame body; very long frames are cut and say how long they were). A process that
//!   wrote a lot (a flood) keeps about its first 16 KiB and last 8 KiB of entries, with an
//!   `"event"` entry `<N transcript entries left out>` between them.
//! - `stderr` (array of strings): the server's stderr lines during the check (the last ones).

use serde_json::{json, Value};

use super::{direction_name, millis, round_ms, target_failed, Counts};
use crate::check::{CheckResult, Outcome, TargetReport};
use crate::checkset::Version;
use crate::mismatch::Finding;

/// The `schema` value of this layout.
pub const SCHEMA: &str = "mcp-conformance/report/v1";

/// The report for all targets, as one JSON document.
pub fn render(reports: &[TargetReport], check_set: Version) -> Value {
    json!({
        "schema": SCHEMA,
        "tool": {"name": "mcp-conformance", "version": env!("CARGO_PKG_VERSION")},
        "checkSet": check_set.to_string(),
        "targets": reports.iter().map(target).collect::<Vec<_>>(),
        "failed": super::any_failed(reports),
    })
}

fn target(report: &TargetReport) -> Value {
    let c = Counts::of(report);
    json!({
        "name": report.name,
        "command": report.command,
        "framing": report.framing,
        "profile": report.profile.as_str(),
        "serverInfo": report.server_info,
        "eras": report.eras,
        "startError": report.start_error,
        "skipped": report.skipped,
        "durationMs": millis(report.duration),
        "summary": {
            "pass": c.pass,
            "fail": c.fail,
            "warn": c.warn,
            "info": c.info,
            "skip": c.skip,
            "expectedFail": c.expected_fail,
            "blocked": c.blocked,
            "notApplicable": c.not_applicable,
        },
        "failed": target_failed(report),
        "staleExpectedFailures": report.stale_expected_failures,
        "starts": starts(report),
        "findings": report.findings.iter().map(finding).collect::<Vec<_>>(),
        "coverage": report.coverage,
        "checks": report.results.iter().map(check).collect::<Vec<_>>(),
    })
}

fn check(r: &CheckResult) -> Value {
    let (expected, actual, detail) = match &r.outcome {
        Outcome::Fail { expected, actual } => (Some(expected), Some(actual), None),
        Outcome::Pass(text)
        | Outcome::Observed(text)
        | Outcome::Skip(text)
        | Outcome::Blocked(text)
        | Outcome::NotApplicable(text) => (None, None, Some(text)),
    };
    let transcript: Vec<Value> = r
        .transcript
        .iter()
        .map(|e| {
            json!({
                "ms": round_ms(e.at_ms),
                "direction": direction_name(e.direction),
                "text": e.text,
            })
        })
        .collect();
    json!({
        "id": r.info.id,
        "level": r.info.level.to_string(),
        "since": r.info.since.to_string(),
        "area": r.info.area(),
        "description": r.info.description,
        "spec": r.info.spec,
        "status": r.status.to_string(),
        "expectedFailure": r.expected_failure,
        "durationMs": millis(r.duration),
        "expected": expected,
        "actual": actual,
        "detail": detail,
        "blockedBy": r.blocked_by,
        "brokeSession": r.broke_session,
        "transcript": transcript,
        "stderr": r.stderr,
    })
}

fn starts(report: &TargetReport) -> Value {
    let s = &report.starts;
    let (first, median, slowest) = match s.first_median_slowest() {
        Some((f, m, w)) => (Some(millis(f)), Some(millis(m)), Some(millis(w))),
        None => (None, None, None),
    };
    json!({
        "count": s.count,
        "answered": s.answered.len(),
        "firstMs": first,
        "medianMs": median,
        "slowestMs": slowest,
    })
}

fn finding(f: &Finding) -> Value {
    json!({
        "kind": f.kind.as_str(),
        "owner": f.owner,
        "seenIn": f.seen_in,
        "actual": f.actual,
        "count": f.count,
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::report::tests::{sample, skipped, start_error};

    #[test]
    fn top_level_keys() {
        let v = render(&[], Version::FIRST);
        assert_eq!(
            v,
            json!({
                "schema": "mcp-conformance/report/v1",
                "tool": {"name": "mcp-conformance", "version": env!("CARGO_PKG_VERSION")},
                "checkSet": "0.1.0",
                "targets": [],
                "failed": false,
            })
        );
    }

    #[test]
    fn full_target_exact() {
        let v = render(&[sample()], Version::FIRST);
        let expected = json!({
            "schema": "mcp-conformance/report/v1",
            "tool": {"name": "mcp-conformance", "version": env!("CARGO_PKG_VERSION")},
            "failed": true,
            "targets": [{
                "name": "demo",
                "command": "demo-server --stdio",
                "framing": "ndjson",
                "profile": "generic",
                "serverInfo": {"name": "demo", "version": "1.2.3"},
                "startError": null,
                "skipped": null,
                "durationMs": 1500.0,
                "summary": {
                    "pass": 2, "fail": 1, "warn": 1, "info": 1, "skip": 1, "expectedFail": 1,
                    "blocked": 0, "notApplicable": 0
                },
                "failed": true,
                "staleExpectedFailures": ["lifecycle.second-initialize"],
                "checks": [
                    {
                        "id": "zeta.custom", "level": "MUST", "area": "zeta",
                        "description": "Description of zeta.custom",
                        "spec": "Spec of zeta.custom",
                        "status": "PASS", "expectedFailure": false, "durationMs": 5.0,
                        "expected": null, "actual": null, "detail": "fine",
                        "transcript": [], "stderr": []
                    },
                    {
                        "id": "jsonrpc.unknown-method", "level": "MUST", "area": "jsonrpc",
                        "description": "Description of jsonrpc.unknown-method",
                        "spec": "Spec of jsonrpc.unknown-method",
                        "status": "FAIL", "expectedFailure": false, "durationMs": 5.0,
                        "expected": "error -32601", "actual": "a result", "detail": null,
                        "transcript": [
                            {"ms": 1.2, "direction": "send",
                             "text": "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"nope\"}"},
                            {"ms": 3.5, "direction": "receive",
                             "text": "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}"}
                        ],
                        "stderr": ["starting"]
                    },
                    {
                        "id": "lifecycle.ping-before-initialize", "level": "MUST",
                        "area": "lifecycle",
                        "description": "Description of lifecycle.ping-before-initialize",
                        "spec": "Spec of lifecycle.ping-before-initialize",
                        "status": "PASS", "expectedFailure": false, "durationMs": 5.0,
                        "expected": null, "actual": null, "detail": "",
                        "transcript": [], "stderr": []
                    },
                    {
                        "id": "framing.stdin-eof-exit", "level": "SHOULD", "area": "framing",
                        "description": "Description of framing.stdin-eof-exit",
                        "spec": "Spec of framing.stdin-eof-exit",
                        "status": "WARN", "expectedFailure": false, "durationMs": 5.0,
                        "expected": "exit within 2 s", "actual": "still running after 2 s",
                        "detail": null, "transcript": [], "stderr": []
                    },
                    {
                        "id": "framing.stderr-volume", "level": "INFO", "area": "framing",
                        "description": "Description of framing.stderr-volume",
                        "spec": "Spec of framing.stderr-volume",
                        "status": "INFO", "expectedFailure": false, "durationMs": 5.0,
                        "expected": null, "actual": null, "detail": "12 lines, 345 bytes",
                        "transcript": [], "stderr": []
                    },
                    {
                        "id": "tools.list-shape", "level": "MUST", "area": "tools",
                        "description": "Description of tools.list-shape",
                        "spec": "Spec of tools.list-shape",
                        "status": "FAIL", "expectedFailure": true, "durationMs": 5.0,
                        "expected": "an object schema", "actual": "a string", "detail": null,
                        "transcript": [], "stderr": []
                    },
                    {
                        "id": "tools.call-shape", "level": "MUST", "area": "tools",
                        "description": "Description of tools.call-shape",
                        "spec": "Spec of tools.call-shape",
                        "status": "SKIP", "expectedFailure": false, "durationMs": 5.0,
                        "expected": null, "actual": null,
                        "detail": "the server has no tools",
                        "transcript": [], "stderr": []
                    }
                ]
            }]
        });
        // Set apart: more keys in the literal above exceed json!'s recursion limit.
        let mut expected = expected;
        expected["checkSet"] = json!("0.1.0");
        expected["targets"][0]["eras"] = json!(["legacy"]);
        expected["targets"][0]["starts"] = json!({"count": 0, "answered": 0, "firstMs": null,
            "medianMs": null, "slowestMs": null});
        expected["targets"][0]["findings"] = json!([]);
        expected["targets"][0]["coverage"] = json!([]);
        for check in expected["targets"][0]["checks"].as_array_mut().unwrap() {
            check["blockedBy"] = Value::Null;
            check["brokeSession"] = Value::Null;
            check["since"] = json!("0.1.0");
        }
        assert_eq!(v, expected, "got:\n{v:#}");
    }

    #[test]
    fn start_error_and_skipped() {
        let v = render(&[start_error(), skipped()], Version::FIRST);
        assert_eq!(v["failed"], json!(true));
        let broken = &v["targets"][0];
        assert_eq!(
            broken["startError"],
            json!("No such file or directory (os error 2)")
        );
        assert_eq!(broken["skipped"], Value::Null);
        assert_eq!(broken["serverInfo"], Value::Null);
        assert_eq!(broken["eras"], json!([]));
        assert_eq!(broken["failed"], json!(true));
        assert_eq!(broken["checks"], json!([]));
        let remote = &v["targets"][1];
        assert_eq!(remote["startError"], Value::Null);
        assert_eq!(
            remote["skipped"],
            json!("an HTTP server; only stdio servers are tested")
        );
        assert_eq!(remote["failed"], json!(false));
        assert_eq!(
            remote["summary"],
            json!({"pass": 0, "fail": 0, "warn": 0, "info": 0, "skip": 0, "expectedFail": 0,
                "blocked": 0, "notApplicable": 0})
        );
        assert!(!render(&[skipped()], Version::FIRST)["failed"]
            .as_bool()
            .unwrap_or(true));
    }

    #[test]
    fn keys_are_exactly_the_schema() {
        let v = render(&[sample()], Version::FIRST);
        let keys = |v: &Value| -> Vec<String> {
            let mut k: Vec<String> = v.as_object().unwrap().keys().cloned().collect();
            k.sort();
            k
        };
        assert_eq!(
            keys(&v),
            ["checkSet", "failed", "schema", "targets", "tool"]
        );
        assert_eq!(
            keys(&v["targets"][0]),
            [
                "checks",
                "command",
                "coverage",
                "durationMs",
                "eras",
                "failed",
                "findings",
                "framing",
                "name",
                "profile",
                "serverInfo",
                "skipped",
                "staleExpectedFailures",
                "startError",
                "starts",
                "summary"
            ]
        );
        assert_eq!(
            keys(&v["targets"][0]["checks"][1]),
            [
                "actual",
                "area",
                "blockedBy",
                "brokeSession",
                "description",
                "detail",
                "durationMs",
                "expected",
                "expectedFailure",
                "id",
                "level",
                "since",
                "spec",
                "status",
                "stderr",
                "transcript"
            ]
        );
        assert_eq!(
            keys(&v["targets"][0]["checks"][1]["transcript"][0]),
            ["direction", "ms", "text"]
        );
    }
}
