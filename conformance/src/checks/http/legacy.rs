//! The legacy era's (2025-03-26 … 2025-11-25) Streamable HTTP: statuses and media types of
//! POST replies, sessions, the GET stream, the protocol version header, `Origin`.

use mcp_protocol::http::{EVENT_STREAM, PROTOCOL_VERSION, SESSION_ID};
use reqwest::Method;
use serde_json::{json, Value};

use super::wire::{modern_post, seen, Ask, Wire, WireError};
use crate::check::Outcome;
use crate::checks::step;
use crate::ctx::Ctx;
use crate::transport::http::reply::Reply;

/// A foreign origin: a page on another site, as a DNS rebinding attack sends.
pub const EVIL_ORIGIN: &str = "http://evil.example";
/// A session id no server issued.
const UNKNOWN_SESSION: &str = "mcp-conformance-unknown-session";

fn ok(reply: &Reply) -> bool {
    (200..300).contains(&reply.status)
}

async fn ready(ctx: &Ctx) -> Result<Wire, WireError> {
    let mut w = Wire::new(ctx)?;
    w.initialize().await?;
    Ok(w)
}

/// A ping of the session `w` holds, sent with `ask`'s changes.
async fn ping(w: &mut Wire, change: impl FnOnce(Ask) -> Ask) -> Result<Reply, WireError> {
    let req = w.request("ping", None);
    let ask = change(w.post(&req));
    w.send(ask).await
}

pub async fn notification_202(ctx: &Ctx) -> Outcome {
    let mut w = step!(Wire::new(ctx), "an HTTP client");
    step!(w.open().await, "initialize to be answered");
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let ask = w.post(&note);
    let reply = step!(w.send(ask).await, "an HTTP response to the notification");
    match reply.status {
        202 if reply.len == 0 => Outcome::pass("202 Accepted, no body"),
        400..=599 => Outcome::pass(format!(
            "refused with {} (an error status is what the text asks of input the server cannot \
             accept)",
            seen(&reply)
        )),
        _ => Outcome::fail("202 Accepted with no body", seen(&reply)),
    }
}

pub async fn request_content_type(ctx: &Ctx) -> Outcome {
    let mut w = step!(Wire::new(ctx), "an HTTP client");
    let init = step!(w.initialize().await, "initialize to be answered");
    let ping = step!(ping(&mut w, |a| a).await, "an HTTP response to ping");
    let mut seen_types = Vec::new();
    for (what, reply) in [("initialize", &init), ("ping", &ping)] {
        if !ok(reply) {
            seen_types.push(format!(
                "{what}: {} (an error, not judged)",
                reply.status_line()
            ));
            continue;
        }
        if !(reply.is_json() || reply.is_sse()) {
            return Outcome::fail(
                "Content-Type application/json or text/event-stream",
                format!("{what}: {}", seen(reply)),
            );
        }
        seen_types.push(format!("{what}: {}", reply.status_line()));
    }
    Outcome::pass(seen_types.join("; "))
}

pub async fn accept_json_only(ctx: &Ctx) -> Outcome {
    let mut w = step!(ready(ctx).await, "a session (initialize answered)");
    let reply = step!(
        ping(&mut w, |a| a.header("accept", Some("application/json"))).await,
        "an HTTP response"
    );
    Outcome::Observed(seen(&reply))
}

pub async fn session_id_ascii(ctx: &Ctx) -> Outcome {
    let mut w = step!(Wire::new(ctx), "an HTTP client");
    let reply = step!(w.open().await, "initialize to be answered");
    let Some(raw) = reply.headers.get(SESSION_ID) else {
        return Outcome::Skip(
            "the server gives no Mcp-Session-Id (sessions are optional: MAY)".to_owned(),
        );
    };
    let bytes = raw.as_bytes();
    match bytes.iter().find(|b| !(0x21..=0x7e).contains(*b)) {
        None if !bytes.is_empty() => {
            Outcome::pass(format!("{} visible ASCII characters", bytes.len()))
        }
        None => Outcome::fail(
            "a non-empty session id of visible ASCII",
            "an empty Mcp-Session-Id",
        ),
        Some(b) => Outcome::fail(
            "only characters 0x21-0x7E",
            format!(
                "byte 0x{b:02x} in Mcp-Session-Id {:?}",
                String::from_utf8_lossy(bytes)
            ),
        ),
    }
}

pub async fn session_required(ctx: &Ctx) -> Outcome {
    let mut w = step!(ready(ctx).await, "a session (initialize answered)");
    if w.session.is_none() {
        return Outcome::Skip("the server gives no Mcp-Session-Id: no session to require".into());
    }
    let reply = step!(
        ping(&mut w, |a| a.header(SESSION_ID, None)).await,
        "an HTTP response"
    );
    if reply.status == 400 {
        Outcome::pass("400 Bad Request")
    } else {
        Outcome::fail(
            "400 Bad Request for a request without Mcp-Session-Id",
            seen(&reply),
        )
    }
}

pub async fn session_unknown(ctx: &Ctx) -> Outcome {
    let mut w = step!(ready(ctx).await, "a session (initialize answered)");
    let reply = step!(
        ping(&mut w, |a| a.header(SESSION_ID, Some(UNKNOWN_SESSION))).await,
        "an HTTP response"
    );
    Outcome::Observed(seen(&reply))
}

pub async fn session_delete(ctx: &Ctx) -> Outcome {
    let mut w = step!(ready(ctx).await, "a session (initialize answered)");
    let Some(session) = w.session.clone() else {
        return Outcome::Skip("the server gives no Mcp-Session-Id: no session to end".into());
    };
    let mut ask = w.bare(Method::DELETE).header(SESSION_ID, Some(&session));
    ask.head_only = false;
    let deleted = step!(w.send(ask).await, "an HTTP response to DELETE");
    if deleted.status == 405 {
        return Outcome::pass("DELETE got 405: the server does not let clients end sessions");
    }
    if !ok(&deleted) {
        return Outcome::Observed(format!(
            "DELETE got {}: neither an ended session nor 405",
            seen(&deleted)
        ));
    }
    let after = step!(ping(&mut w, |a| a).await, "an HTTP response");
    if after.status == 404 {
        Outcome::pass(format!(
            "DELETE got {}; a request with the ended session got 404",
            deleted.status_line()
        ))
    } else {
        Outcome::fail(
            "404 Not Found for a request with the session DELETE ended",
            format!(
                "DELETE got {}, then the request got {}",
                deleted.status_line(),
                seen(&after)
            ),
        )
    }
}

pub async fn get_stream(ctx: &Ctx) -> Outcome {
    let mut w = step!(ready(ctx).await, "a session (initialize answered)");
    let ask = w.bare(Method::GET);
    let reply = step!(w.send(ask).await, "an HTTP response to GET");
    if reply.status == 405 {
        Outcome::pass("405 Method Not Allowed: no GET stream")
    } else if ok(&reply) && reply.media.as_deref() == Some(EVENT_STREAM) {
        Outcome::pass(reply.status_line())
    } else {
        Outcome::fail(
            "Content-Type text/event-stream, or 405 Method Not Allowed",
            reply.status_line(),
        )
    }
}

pub async fn version_invalid(ctx: &Ctx) -> Outcome {
    let mut w = step!(ready(ctx).await, "a session (initialize answered)");
    if w.version.as_deref() == Some("2025-03-26") {
        return Outcome::Skip(
            "the server negotiated 2025-03-26, which has no MCP-Protocol-Version header".into(),
        );
    }
    let reply = step!(
        ping(&mut w, |a| a.header(PROTOCOL_VERSION, Some("1999-01-01"))).await,
        "an HTTP response"
    );
    if reply.status == 400 {
        Outcome::pass("400 Bad Request")
    } else {
        Outcome::fail(
            "400 Bad Request for MCP-Protocol-Version 1999-01-01",
            seen(&reply),
        )
    }
}

pub async fn origin_forbidden(ctx: &Ctx) -> Outcome {
    let mut w = step!(Wire::new(ctx), "an HTTP client");
    let legacy = ctx.era().legacy;
    let ask = if legacy {
        let init = w.request(
            "initialize",
            Some(crate::probe::initialize_params(crate::LATEST)),
        );
        Ask::post(&init)
    } else {
        let discover = w.modern_request(mcp_protocol::mcp::modern::DISCOVER, None);
        modern_post(&discover, None)
    };
    let ask = ask.header("origin", Some(EVIL_ORIGIN));
    let reply = step!(w.send(ask).await, "an HTTP response");
    if reply.status == 403 {
        Outcome::pass("403 Forbidden")
    } else {
        Outcome::fail(
            format!("403 Forbidden for Origin: {EVIL_ORIGIN}"),
            seen(&reply),
        )
    }
}

pub async fn origin_forbidden_get_delete(ctx: &Ctx) -> Outcome {
    let mut w = step!(Wire::new(ctx), "an HTTP client");
    if ctx.era().legacy {
        step!(w.initialize().await, "a session (initialize answered)");
    }
    let mut seen_all = Vec::new();
    for method in [Method::GET, Method::DELETE] {
        let ask = w.bare(method.clone()).header("origin", Some(EVIL_ORIGIN));
        let reply = step!(w.send(ask).await, "an HTTP response");
        if reply.status != 403 {
            return Outcome::fail(
                format!("403 Forbidden for a {method} with Origin: {EVIL_ORIGIN}"),
                format!("{method} got {}", reply.status_line()),
            );
        }
        seen_all.push(format!("{method}: 403"));
    }
    Outcome::pass(seen_all.join("; "))
}

/// What an error body says of itself: a JSON-RPC error with or without an id, or not one.
fn describe_error(reply: &Reply) -> String {
    let messages = reply.messages();
    let what = match messages.first() {
        None if reply.len == 0 => "no body".to_owned(),
        None => format!("a body that is not JSON-RPC: {}", reply.text()),
        Some(m) if m.get("error").is_none() => format!("not an error response: {}", reply.text()),
        Some(m) => match m.get("id") {
            None => "a JSON-RPC error without an id".to_owned(),
            Some(Value::Null) => "a JSON-RPC error with id null".to_owned(),
            Some(id) => format!("a JSON-RPC error with id {id}"),
        },
    };
    format!("{} → {what}", reply.status_line())
}

pub async fn error_body(ctx: &Ctx) -> Outcome {
    let mut w = step!(ready(ctx).await, "a session (initialize answered)");
    let mut seen_errors = Vec::new();
    let garbage = w.post(&Value::Null);
    let garbage = Ask {
        body: Some(b"not json".to_vec()),
        ..garbage
    };
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let asks = [
        ("a body that is not JSON", garbage),
        (
            "a notification with an unknown session",
            w.post(&note).header(SESSION_ID, Some(UNKNOWN_SESSION)),
        ),
        (
            "a notification with a foreign Origin",
            w.post(&note).header("origin", Some(EVIL_ORIGIN)),
        ),
    ];
    for (what, ask) in asks {
        let reply = step!(w.send(ask).await, "an HTTP response");
        if reply.status >= 400 {
            seen_errors.push(format!("{what}: {}", describe_error(&reply)));
        } else {
            seen_errors.push(format!("{what}: {} (not an error)", reply.status_line()));
        }
    }
    Outcome::Observed(seen_errors.join("; "))
}
