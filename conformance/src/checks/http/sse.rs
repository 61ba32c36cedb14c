//! SSE replies to a POSTed request: each event's data is one JSON-RPC message, the response is
//! among them, and the stream ends after it.

use super::wire::{seen, Wire, WireError};
use crate::check::Outcome;
use crate::checks::step;
use crate::ctx::Ctx;
use crate::transport::http::reply::{answers, Body, Reply};
use serde_json::Value;

/// A ping POSTed in a fresh session and its reply.
async fn ping_reply(ctx: &Ctx) -> Result<(Reply, Value), WireError> {
    let mut w = Wire::new(ctx)?;
    w.initialize().await?;
    let req = w.request("ping", None);
    let ask = w.post(&req);
    let reply = w.send(ask).await?;
    Ok((reply, req["id"].clone()))
}

fn not_sse(reply: &Reply) -> Option<Outcome> {
    (!reply.is_sse()).then(|| {
        Outcome::Skip(format!(
            "the reply to a ping was {}, not an SSE stream",
            reply.status_line()
        ))
    })
}

pub async fn response(ctx: &Ctx) -> Outcome {
    let (reply, id) = step!(ping_reply(ctx).await, "a ping answered over HTTP");
    if let Some(skip) = not_sse(&reply) {
        return skip;
    }
    let Body::Events(events) = &reply.body else {
        return Outcome::fail("SSE events", seen(&reply));
    };
    for event in events.iter().filter(|e| !e.data.is_empty()) {
        let one = serde_json::from_str::<Value>(&event.data)
            .ok()
            .filter(|v| v.get("jsonrpc").is_some());
        if one.is_none() {
            return Outcome::fail(
                "each event's data is one JSON-RPC message",
                format!(
                    "an event's data: {:?}",
                    crate::transport::http::reply::cut(&event.data, 300)
                ),
            );
        }
    }
    let found = events
        .iter()
        .any(|e| serde_json::from_str::<Value>(&e.data).is_ok_and(|v| answers(&v, &id)));
    let other = reply
        .messages()
        .into_iter()
        .find(|m| crate::probe::is_response(m) && m.get("id") != Some(&id));
    if let (false, Some(other)) = (found, other) {
        let got = other.get("id").cloned().unwrap_or_default();
        return Outcome::Skip(format!(
            "the stream carried a response under id {got}, not the request's {id}: the ids are \
             jsonrpc.ids-echoed's to judge"
        ));
    }
    if found {
        Outcome::pass(format!(
            "{} event(s), the response among them",
            events.len()
        ))
    } else {
        let why = reply.problem.clone().unwrap_or_else(|| {
            if reply.ended {
                "the stream ended".to_owned()
            } else {
                "the stream stayed open".to_owned()
            }
        });
        Outcome::fail(
            format!("an event carrying the response to id {id}"),
            format!(
                "{} event(s) with data, none the response; {why}",
                events.iter().filter(|e| !e.data.is_empty()).count()
            ),
        )
    }
}

pub async fn ends(ctx: &Ctx) -> Outcome {
    let (reply, id) = step!(ping_reply(ctx).await, "a ping answered over HTTP");
    if let Some(skip) = not_sse(&reply) {
        return skip;
    }
    if !reply.messages().iter().any(|m| answers(m, &id)) {
        return Outcome::Skip("the stream carried no readable response (http.sse-response)".into());
    }
    if reply.ended {
        Outcome::pass("the stream ended after the response")
    } else {
        Outcome::fail(
            "the stream ends after the response",
            format!(
                "still open {:?} after the request (--timeout)",
                ctx.config().wait
            ),
        )
    }
}
