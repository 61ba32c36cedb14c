//! The observed session as a report: the client checks that apply to an observed session and
//! the server checks of [`super::server_checks`], judged on the timeline, in the JSON schema of
//! `--format json` and the text of the harness's report.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use super::recorder::Recorder;
use super::server_checks;
use crate::check::{judge, CheckResult, Level, Outcome, Profile, Starts, TargetReport};
use crate::clients::checks;
use crate::clients::judge::{result, ClientCheck, Session};
use crate::clients::timeline::{Side, Timeline, What, Wire};
use crate::evidence::bounded_transcript;
use crate::ids::observed as id;
use crate::report::{json, text};

/// What was observed: the server (its command line, or the upstream URL) and how.
#[derive(Debug, Clone)]
pub(crate) struct Subject {
    pub(crate) name: String,
    pub(crate) wire: Wire,
}

/// How far the observation got.
#[derive(Debug, Clone, Default)]
pub(crate) struct Coverage {
    /// The judge fell behind and stopped.
    pub(crate) stopped: bool,
    /// The timeline reached its bound.
    pub(crate) truncated: Option<String>,
    /// The session is over (the final report).
    pub(crate) ended: bool,
}

/// Every check judged on an observed session, in report order.
fn observed_checks(wire: Wire) -> Vec<ClientCheck> {
    let mut all = checks::all();
    all.extend(server_checks::checks());
    all.retain(|c| c.applies(None, wire));
    all
}

/// The report of the session so far.
pub(crate) fn build(
    subject: &Subject,
    recorder: &Recorder,
    coverage: &Coverage,
    duration: Duration,
    start_error: Option<String>,
) -> TargetReport {
    let timeline = &recorder.timeline;
    let sessions = [Session {
        timeline,
        scenario: None,
    }];
    let mut results: Vec<CheckResult> = observed_checks(subject.wire)
        .iter()
        .map(|check| {
            let mut r = result(check, &sessions, subject.wire, Profile::Generic);
            r.transcript = bounded_transcript(std::mem::take(&mut r.transcript));
            r
        })
        .collect();
    results.push(completeness(coverage));
    let framing = match subject.wire {
        Wire::Http => "http".to_owned(),
        Wire::Stdio => recorder
            .framing()
            .map_or_else(|| "ndjson".to_owned(), |f| f.as_str().to_owned()),
    };
    TargetReport {
        name: subject.name.clone(),
        command: subject.name.clone(),
        framing,
        profile: Profile::Generic,
        server_info: server_info(timeline),
        eras: eras(timeline),
        start_error,
        skipped: None,
        results,
        stale_expected_failures: Vec::new(),
        findings: Vec::new(),
        coverage: Vec::new(),
        starts: starts(subject.wire, timeline),
        duration,
    }
}

/// stdio: one server start, answered when its first message came.
fn starts(wire: Wire, t: &Timeline) -> Starts {
    if wire == Wire::Http {
        return Starts::default();
    }
    Starts {
        count: 1,
        answered: t
            .events
            .iter()
            .find(|e| matches!(&e.what, What::Message(m) if m.from == Side::Server))
            .map(|e| e.at)
            .into_iter()
            .collect(),
    }
}

/// `observer.complete`: whether every message of the session was judged.
fn completeness(coverage: &Coverage) -> CheckResult {
    let info = ClientCheck::new(
        id::OBSERVER_COMPLETE,
        Level::Info,
        "the observer judged every message of the session (traffic is forwarded in full either way)",
        "mcp-conformance observe",
        |_| Outcome::Skip(String::new()),
    )
    .info;
    let outcome = if coverage.stopped {
        Outcome::Observed("judging stopped when the judge fell behind the traffic: later messages were forwarded but not judged, so this report is incomplete".into())
    } else if let Some(why) = &coverage.truncated {
        Outcome::Observed(format!("this report is incomplete: {why}"))
    } else if coverage.ended {
        Outcome::pass("every message of the session was judged")
    } else {
        Outcome::pass("every message so far was judged; the session is still open")
    };
    CheckResult {
        status: judge(info.level, &outcome, Profile::Generic),
        info,
        outcome,
        expected_failure: false,
        blocked_by: None,
        broke_session: None,
        duration: Duration::ZERO,
        transcript: Vec::new(),
        whole_transcript: Vec::new(),
        stderr: Vec::new(),
    }
}

/// `serverInfo` of the first initialize result, or of a server/discover result's `_meta`.
fn server_info(t: &Timeline) -> Option<Value> {
    let answer = |method: &str| {
        let (_, request) = t.first_request(Side::Client, method)?;
        let (_, response) = t.response_to(Side::Client, request.id()?)?;
        response.result().cloned()
    };
    if let Some(info) = answer("initialize").and_then(|r| r.get("serverInfo").cloned()) {
        return Some(info);
    }
    answer("server/discover")?
        .pointer("/_meta/io.modelcontextprotocol~1serverInfo")
        .cloned()
}

/// The eras the session showed: `legacy` (an initialize result), `modern` (a DiscoverResult).
fn eras(t: &Timeline) -> Vec<String> {
    let answered = |method: &str, modern: bool| {
        t.from(Side::Client)
            .filter(|(_, m)| m.is_request() && m.method() == Some(method))
            .filter_map(|(_, m)| t.response_to(Side::Client, m.id()?))
            .filter_map(|(_, r)| r.result())
            .any(|r| !modern || r.get("supportedVersions").is_some_and(Value::is_array))
    };
    let mut eras = Vec::new();
    if answered("initialize", false) {
        eras.push("legacy".to_owned());
    }
    if answered("server/discover", true) {
        eras.push("modern".to_owned());
    }
    eras
}

/// Writes the JSON report to `path` atomically: `path.tmp`, then a rename over `path`.
pub(crate) fn write_json(path: &Path, report: &TargetReport) -> std::io::Result<()> {
    let doc = json::render(
        std::slice::from_ref(report),
        crate::checkset::Version::current(),
    );
    let bytes = serde_json::to_vec_pretty(&doc).map_err(std::io::Error::from)?;
    let tmp = tmp_path(path);
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(&tmp, path)
}

fn tmp_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".tmp");
    path.with_file_name(name)
}

/// The text report, for stderr.
pub(crate) fn text(report: &TargetReport) -> String {
    let opts = text::TextOptions {
        color: text::color_wanted(std::io::stderr().is_terminal()),
        verbose: false,
    };
    text::render(std::slice::from_ref(report), &opts)
}
