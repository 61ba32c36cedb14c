//! `docs/checks.md` is generated from the checks themselves: every check's id, level, where it
//! runs, what it asks of the server, the spec text it cites and the words that make its level.
//! This test fails when the page does not match the checks; `UPDATE_DOCS=1 cargo test -p
//! mcp-conformance --test docs` rewrites it.
#![allow(clippy::unwrap_used)]

use std::path::Path;

use mcp_conformance::{Level, RunsIn, Transport};

const INTRO: &str = "\
# The checks of `mcp-conformance`

Generated from the checks themselves by `conformance/tests/docs.rs` (`UPDATE_DOCS=1 cargo test
-p mcp-conformance --test docs`); do not edit by hand. `mcp-conformance --list` prints the same.

A check's level is the word its cited sentence uses: **MUST** only where the text says MUST (or
`schema.ts` makes a field required), **SHOULD** where it says SHOULD, **INFO** where it is
silent, or where the check feeds the server input the spec forbids the client to send (\"The
client MUST NOT write anything to the server's stdin that is not a valid MCP message\": nothing
then binds the server). An INFO check reports what the server did and never fails. Under the
`echo` profile (the bundled `mcp-echo-server`), some checks have the level our own docs
(`docs/server.md`) promise instead; `echo.*` checks run only there.

Where a check runs:

- **start-up**: judged from the two processes every run starts at once (`initialize`, and
  `server/discover` with 2026-07-28 `_meta`) and from what the whole run saw.
- **legacy session** / **modern session**: one process per era, shared by these checks, which
  run one after another in the order below (the ones marked *first* before, *last* after the
  rest). Between two checks a ping (`server/discover`) must be answered; a session that breaks
  is replaced and the check it broke in is named.
- **own process**: a fresh process. Checks that judge one observation (the `initialize` of each
  version, input a client must not send, a short session, requests without `_meta`) share it:
  it is made once, in processes of its own, and they run together; the ones marked *first*
  start before the rest, since their server may go silent and make them wait.
- **HTTP requests of its own** (`http.*`): Streamable HTTP only (`--url`); each check sends
  its own requests, with exactly the headers it tests. Over stdio they are N/A.

Over Streamable HTTP (`--url`) the same checks run with the same ids and levels, each message a
POST; a “fresh process” is then a fresh client (a new session). The ones marked *stdio only*
(byte framing, stdin, exit, stderr) are reported N/A (not applicable) there.
";

fn session(info: &mcp_conformance::CheckInfo) -> String {
    if info.transport == Transport::Http {
        return "HTTP requests of its own".to_owned();
    }
    let mut text = match info.runs_in {
        RunsIn::Startup => "start-up",
        RunsIn::Legacy => "legacy session",
        RunsIn::Modern => "modern session",
        RunsIn::Own => "own process",
    }
    .to_owned();
    if info.runs_first {
        text.push_str(", first");
    }
    if info.ends_session {
        text.push_str(", last");
    }
    if !info.shares.is_empty() {
        text.push_str(&format!(" (shared observation: {})", info.shares));
    }
    if info.transport == Transport::Stdio {
        text.push_str("; *stdio only*");
    }
    text
}

fn level(info: &mcp_conformance::CheckInfo) -> String {
    match (info.echo_only, info.echo_level) {
        (true, _) => format!("{} (echo profile only)", info.level),
        (false, Some(echo)) if echo != info.level => format!("{} (echo: {echo})", info.level),
        _ => info.level.to_string(),
    }
}

fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}

/// A check of the 2026-07-28 era: it runs in the modern session or tests 2026-07-28 itself.
fn is_modern(info: &mcp_conformance::CheckInfo) -> bool {
    info.runs_in == RunsIn::Modern
        || info.id.starts_with("modern.")
        || info.id.starts_with("http.modern-")
}

fn table(out: &mut String, infos: &[&mcp_conformance::CheckInfo]) {
    out.push_str(
        "\n| check | level | runs in | the server … | spec | the words | why this level |\n",
    );
    out.push_str("|---|---|---|---|---|---|---|\n");
    for i in infos {
        let quote = match (i.quote.is_empty(), i.echo_only) {
            (_, true) => "docs/server.md (our server's documented behaviour)".to_owned(),
            (true, false) => "(the text is silent)".to_owned(),
            (false, false) => format!("“{}”", i.quote),
        };
        out.push_str(&format!(
            "| `{}` | {} | {} | {} | {} | {} | {} |\n",
            i.id,
            level(i),
            session(i),
            cell(&i.description),
            cell(&i.spec),
            cell(&quote),
            cell(&i.reason)
        ));
    }
}

fn render() -> String {
    let checks = mcp_conformance::builtin().unwrap();
    let mut out = String::from(INTRO);
    let count = |l: Level| {
        checks
            .iter()
            .filter(|c| c.info.level == l && !c.info.echo_only)
            .count()
    };
    out.push_str(&format!(
        "\n{} checks for any server: {} MUST, {} SHOULD, {} INFO; {} more in the echo profile.\n",
        checks.iter().filter(|c| !c.info.echo_only).count(),
        count(Level::Must),
        count(Level::Should),
        count(Level::Info),
        checks.iter().filter(|c| c.info.echo_only).count(),
    ));
    let (modern, legacy): (Vec<_>, Vec<_>) =
        checks.iter().map(|c| &c.info).partition(|i| is_modern(i));
    out.push_str(&format!(
        "\n## Any era, and the legacy era (the `initialize` handshake, 2024-11-05 … 2025-11-25)\n\n\
         {} checks; those that exercise a feature cite the 2025-11-25 page.\n",
        legacy.len()
    ));
    table(&mut out, &legacy);
    out.push_str(&format!(
        "\n## The 2026-07-28 era (stateless: `server/discover`, `_meta` in every request)\n\n\
         {} checks, each built from the 2026-07-28 page it cites; they run against a server that \
         accepts 2026-07-28.\n",
        modern.len()
    ));
    table(&mut out, &modern);
    client_tables(&mut out);
    out
}

const CLIENT_INTRO: &str = "
# Client checks (`mcp-conformance client`, `mcp-conformance observe`)

These judge the other side: what an MCP client or host does. `mcp-conformance client` plays a
scripted server in each scenario (one run of the client each) and judges every session a
check applies to; the worst verdict of those sessions is the check's. `mcp-conformance
observe` judges what a real host does with a real server, passively, with the checks marked
*observe*. A check without the evidence it needs is SKIP and says why, never PASS.
";

const OBSERVED_INTRO: &str = "
## The server, as `mcp-conformance observe` sees it

Judged passively from the traffic of a real host's session, without asking the server
anything: only what the messages show, and only where the sentence leaves no doubt.
`mcp-conformance -- SERVER` probes far more.
";

fn client_tables(out: &mut String) {
    out.push_str(CLIENT_INTRO);
    client_table(out, &mcp_conformance::client_checks(), "client checks");
    out.push_str(OBSERVED_INTRO);
    client_table(
        out,
        &mcp_conformance::observed_server_checks(),
        "server checks",
    );
}

fn client_table(out: &mut String, checks: &[mcp_conformance::ClientCheckInfo], what: &str) {
    let count = |l: Level| checks.iter().filter(|c| c.info.level == l).count();
    out.push_str(&format!(
        "\n{} {what}: {} MUST, {} SHOULD, {} INFO.\n",
        checks.len(),
        count(Level::Must),
        count(Level::Should),
        count(Level::Info),
    ));
    out.push_str(
        "\n| check | level | judged in | the peer … | spec | the words | why this level |\n",
    );
    out.push_str("|---|---|---|---|---|---|---|\n");
    for c in checks {
        let i = &c.info;
        let mut parts: Vec<String> = Vec::new();
        if what == "client checks" {
            parts.push(if c.scenarios.is_empty() {
                "every scenario".to_owned()
            } else {
                c.scenarios.join(", ")
            });
        }
        if c.observed {
            parts.push("observe".to_owned());
        }
        let mut judged = parts.join("; ");
        match i.transport {
            Transport::Stdio => judged.push_str("; *stdio only*"),
            Transport::Http => judged.push_str("; *Streamable HTTP only*"),
            Transport::Any => {}
        }
        let quote = if i.quote.is_empty() {
            "(the text is silent)".to_owned()
        } else {
            format!("“{}”", i.quote)
        };
        out.push_str(&format!(
            "| `{}` | {} | {} | {} | {} | {} | {} |\n",
            i.id,
            i.level,
            cell(&judged),
            cell(&i.description),
            cell(&i.spec),
            cell(&quote),
            cell(&i.reason)
        ));
    }
}

#[test]
fn docs_checks_md_matches_the_checks() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/checks.md");
    let want = render();
    if std::env::var_os("UPDATE_DOCS").is_some() {
        std::fs::write(&path, &want).unwrap();
        return;
    }
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        have == want,
        "docs/checks.md does not match the checks: run \
         `UPDATE_DOCS=1 cargo test -p mcp-conformance --test docs` and commit it"
    );
}

/// Every check outside the echo profile quotes the words its level rests on (or, for an INFO
/// check where the text is silent, says so).
#[test]
fn every_check_quotes_its_text() {
    let servers = mcp_conformance::builtin()
        .unwrap()
        .into_iter()
        .map(|c| c.info);
    let clients = mcp_conformance::client_checks()
        .into_iter()
        .chain(mcp_conformance::observed_server_checks())
        .map(|c| c.info);
    for info in servers.chain(clients) {
        let c = Quoted { info };
        if c.info.echo_only {
            continue;
        }
        let silent = c.info.quote.is_empty();
        assert!(
            !silent || c.info.level == Level::Info && !c.info.reason.is_empty(),
            "{} quotes nothing",
            c.info.id
        );
        let word = match c.info.level {
            Level::Must => Some("MUST"),
            Level::Should => Some("SHOULD"),
            Level::Info => None,
        };
        if let Some(word) = word {
            assert!(
                c.info.quote.contains(word) || c.info.quote.contains("schema.ts"),
                "{} is {word} but its quote says neither {word} nor names a required schema field: {}",
                c.info.id,
                c.info.quote
            );
        }
    }
}

/// A check's description, as the quoting rule reads it.
struct Quoted {
    info: mcp_conformance::CheckInfo,
}
