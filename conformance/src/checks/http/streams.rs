//! The legacy era's streams of one session: the GET stream carries no JSON-RPC response (none
//! is being resumed), and SSE event ids, where a server gives them, are unique across all the
//! session's streams.

use std::collections::BTreeMap;
use std::time::Duration;

use reqwest::Method;
use serde_json::Value;

use super::wire::{Wire, WireError};
use crate::check::Outcome;
use crate::checks::step;
use crate::ctx::Ctx;
use crate::pattern::short;
use crate::probe::is_response;
use crate::transport::http::reply::{Body, Reply};

/// How long a GET stream that stays open is read after the ping sent beside it was answered:
/// what the server would put on it by mistake (the ping's response) comes by then.
const GET_WINDOW: Duration = Duration::from_secs(1);

/// In a ready session: the GET stream opened (without `Last-Event-ID`: nothing is resumed), a
/// ping POSTed beside it (a server that routes responses to the GET stream puts it there), the
/// GET stream read until it ends or shortly after the ping was answered. The ping's reply and
/// the GET stream's.
async fn get_beside_ping(w: &mut Wire) -> Result<(Reply, Reply), WireError> {
    let (resp, deadline) = w.open_stream(&w.bare(Method::GET)).await?;
    let ping = w.request("ping", None);
    let ask = w.post(&ping);
    let pinged = w.send(ask).await?;
    let until = deadline.min(tokio::time::Instant::now() + GET_WINDOW);
    let stream = w.read_stream(resp, until).await;
    Ok((pinged, stream))
}

/// A GET answer that is no stream: nothing to judge.
fn no_stream(reply: &Reply) -> Option<Outcome> {
    if reply.status == 405 {
        return Some(Outcome::Skip(
            "GET got 405: the server offers no GET stream".into(),
        ));
    }
    (!reply.is_sse()).then(|| {
        Outcome::Skip(format!(
            "GET got {}, not an SSE stream (http.get-stream judges it)",
            reply.status_line()
        ))
    })
}

fn events(reply: &Reply) -> &[mcp_protocol::http::SseEvent] {
    match &reply.body {
        Body::Events(events) => events,
        _ => &[],
    }
}

pub async fn get_no_response(ctx: &Ctx) -> Outcome {
    let mut w = step!(Wire::new(ctx), "an HTTP client");
    step!(w.initialize().await, "a session (initialize answered)");
    let (_, stream) = step!(
        get_beside_ping(&mut w).await,
        "HTTP responses to GET and a ping"
    );
    if let Some(skip) = no_stream(&stream) {
        return skip;
    }
    let all = events(&stream);
    let response = all
        .iter()
        .filter_map(|e| serde_json::from_str::<Value>(&e.data).ok())
        .find(is_response);
    match response {
        Some(r) => Outcome::fail(
            "no JSON-RPC response on a GET stream opened without Last-Event-ID",
            format!("an event of the GET stream carried {}", short(&r)),
        ),
        None => Outcome::pass(format!(
            "{} event(s) on the GET stream, none a response ({})",
            all.len(),
            if stream.ended {
                "it ended"
            } else {
                "read while a ping was answered"
            }
        )),
    }
}

pub async fn event_ids_unique(ctx: &Ctx) -> Outcome {
    let mut w = step!(Wire::new(ctx), "an HTTP client");
    let init = step!(w.initialize().await, "a session (initialize answered)");
    let (ping, stream) = step!(
        get_beside_ping(&mut w).await,
        "HTTP responses to GET and a ping"
    );
    let req = w.request("ping", None);
    let ask = w.post(&req);
    let again = step!(w.send(ask).await, "an HTTP response to a second ping");
    let streams = [
        ("initialize", &init),
        ("a ping", &ping),
        ("the GET stream", &stream),
        ("a second ping", &again),
    ];
    let mut first_seen: BTreeMap<&str, &str> = BTreeMap::new();
    let mut total = 0;
    for (what, reply) in streams.iter().filter(|(_, r)| r.is_sse()) {
        for id in events(reply).iter().filter_map(|e| e.id.as_deref()) {
            total += 1;
            if let Some(before) = first_seen.insert(id, what) {
                return Outcome::fail(
                    "each SSE event id used once across the session's streams",
                    format!("event id {id:?} on {before} and again on {what}"),
                );
            }
        }
    }
    if total == 0 {
        let kinds: Vec<String> = streams
            .iter()
            .map(|(what, r)| format!("{what}: {}", r.status_line()))
            .collect();
        return Outcome::Skip(format!(
            "no SSE event carried an id (ids are optional: MAY); {}",
            kinds.join("; ")
        ));
    }
    Outcome::pass(format!(
        "{total} event ids across the session's streams, all distinct"
    ))
}
