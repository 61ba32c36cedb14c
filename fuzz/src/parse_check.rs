//! The message parser's invariants: `mcp_protocol::parse` on arbitrary bytes.
//!
//! 1. It never panics, and its only errors are -32700 (`Parse`) and -32600 (`Invalid`).
//! 2. Classification: the input is valid JSON (per `serde_json::Value`) exactly when the result
//!    is not a parse error; a JSON array is a batch with one item per element (an empty one is
//!    -32600); surrounding whitespace changes nothing.
//! 3. Round trip: every message it returns (single or batch member), serialised and parsed
//!    again, is the same message (floats within a few units in the last place: serde_json's
//!    default float reading is not exact); a request's `id` is the input's `id`, exactly.
//! 4. Ids of invalid messages are read only from the input's own `id` member, and an invalid
//!    attempted response is marked as such (so it is not answered); a notification has no `id`
//!    member.
//! 5. The error response the server would send for a bad frame is itself a valid response
//!    carrying the frame's id.
//! 6. The fast path (the scanner in `mcp_protocol::parse_as`) changes nothing: `parse` gives exactly what
//!    `parse_with_serde`, serde_json's path alone, gives, errors word for word.

use mcp_protocol::{
    parse, parse_with_serde, ErrorCode, FrameError, Incoming, InvalidMessage, Message, Outgoing,
    Response,
};
use serde_json::Value;

/// Not a bug, a choice: a value that RFC 8259's grammar allows but serde_json cannot decode (a
/// lone surrogate escape, §8.2; a number beyond f64, §6 lets implementations limit the range)
/// is accepted inside a member `parse` skips, since nothing decodes it, while serde_json's
/// `Value`, the oracle here, refuses the whole text. Such grammar-valid inputs are not held to
/// "not JSON ⇒ parse error". (Invalid UTF-8 anywhere is a parse error: fixed after this target
/// found it.)
pub const UNDECODABLE_VALUES_IN_SKIPPED_MEMBERS_ACCEPTED: bool = true;

/// Fixed (found by this target): input that is not JSON but starts like a message of the wrong
/// shape (`5 x`, `"s"}`) was -32600 instead of -32700.
pub const KNOWN_BUG_SHAPE_BEFORE_SYNTAX: bool = false;

/// Runs every check on `data`. Panics on a violated invariant.
pub fn run(data: &[u8]) {
    let result = parse(data);
    let value = serde_json::from_slice::<Value>(data);

    // 6. The fast path against serde_json's.
    assert_eq!(
        format!("{result:?}"),
        format!("{:?}", parse_with_serde::<Value>(data)),
        "the fast path and serde_json's path differ on {}",
        data.escape_ascii()
    );

    // 1. Only the two wire classes, mapped to their codes.
    if let Err(e) = &result {
        let code = e.to_error_object().code;
        match e {
            FrameError::Parse(_) => assert_eq!(code, ErrorCode::PARSE_ERROR),
            FrameError::Invalid(_) => assert_eq!(code, ErrorCode::INVALID_REQUEST),
            other => panic!("parse returned a framing error: {other:?}"),
        }
    }

    // 2. Classification against serde_json's own reading.
    let is_parse_error = matches!(result, Err(FrameError::Parse(_)));
    match &value {
        Ok(_) => assert!(
            !is_parse_error,
            "valid JSON classified as a parse error: {result:?}\ninput: {}",
            data.escape_ascii()
        ),
        Err(json_error) => {
            let tolerated = match &result {
                // A skipped undecodable value leaves the message readable (or wrongly shaped).
                Ok(_) | Err(FrameError::Invalid(_))
                    if UNDECODABLE_VALUES_IN_SKIPPED_MEMBERS_ACCEPTED && grammar_valid(data) =>
                {
                    true
                }
                Ok(_) => false,
                Err(FrameError::Invalid(_)) => KNOWN_BUG_SHAPE_BEFORE_SYNTAX,
                Err(_) => false,
            };
            assert!(
                is_parse_error || tolerated,
                "not JSON ({json_error}) but parse returned {result:?}\ninput: {}",
                data.escape_ascii()
            );
        }
    }
    let mut padded = b" \t\r\n".to_vec();
    padded.extend_from_slice(data);
    padded.extend_from_slice(b"\r\n ");
    let again = parse(&padded);
    match (&result, &again) {
        (Ok(a), Ok(b)) => assert_eq!(a, b, "surrounding whitespace changed the message"),
        // Reasons may quote a line and column; the id must not change.
        (Err(FrameError::Invalid(a)), Err(FrameError::Invalid(b))) => {
            assert_eq!(a.id, b.id, "surrounding whitespace changed the -32600's id")
        }
        (Err(FrameError::Parse(_)), Err(FrameError::Parse(_))) => {}
        (a, b) => panic!("surrounding whitespace changed the class: {a:?} vs {b:?}"),
    }

    if let Ok(value) = &value {
        match (value, &result) {
            (Value::Array(items), Ok(Incoming::Batch(batch))) => {
                assert!(!items.is_empty(), "an empty array parsed as a batch");
                assert_eq!(
                    items.len(),
                    batch.len(),
                    "batch size differs from the array"
                );
                for (item, member) in items.iter().zip(batch) {
                    match member {
                        Ok(m) => check_message_against(m, item),
                        Err(inv) => check_invalid(inv, item),
                    }
                }
            }
            (Value::Array(items), Err(FrameError::Invalid(inv))) => {
                assert!(
                    items.is_empty(),
                    "a non-empty array was refused whole: {inv:?}"
                );
                assert_eq!(inv.id, None);
            }
            (Value::Array(_), other) => panic!("a JSON array parsed as {other:?}"),
            (_, Ok(Incoming::Batch(_))) => panic!("a non-array parsed as a batch"),
            (v, Ok(Incoming::Single(m))) => check_message_against(m, v),
            (v, Err(FrameError::Invalid(inv))) => check_invalid(inv, v),
            (_, Err(e)) => panic!("unexpected {e:?}"),
        }
    }

    // 3. Round trip of what was parsed.
    match &result {
        Ok(Incoming::Single(m)) => {
            let text = serde_json::to_vec(m).expect("a message serialises");
            match parse(&text) {
                Ok(Incoming::Single(again)) => assert_same_message(m, &again, &text),
                other => panic!(
                    "re-parsing {} gave {other:?}",
                    String::from_utf8_lossy(&text)
                ),
            }
        }
        Ok(Incoming::Batch(items)) => {
            let ok: Vec<Message> = items.iter().filter_map(|i| i.clone().ok()).collect();
            if !ok.is_empty() {
                let text = serde_json::to_vec(&Outgoing::Batch(ok.clone())).expect("serialises");
                match parse(&text) {
                    Ok(Incoming::Batch(again)) => {
                        assert_eq!(again.len(), ok.len(), "re-parsing a batch changed its size");
                        for (m, a) in ok.iter().zip(&again) {
                            let a = a.as_ref().expect("a re-parsed member is valid");
                            assert_same_message(m, a, &text);
                        }
                    }
                    other => panic!("re-parsing a batch gave {other:?}"),
                }
            }
        }
        Err(e) => {
            // 5. The server's reply to this frame.
            let reply = Message::Response(Response::error(
                e.request_id().cloned(),
                e.to_error_object(),
            ));
            let text = serde_json::to_vec(&reply).expect("serialises");
            assert_eq!(parse(&text), Ok(Incoming::Single(reply)));
        }
    }
}

/// The same message: ids, methods and structure exactly, numbers that are not integers within
/// a few units in the last place (serde_json without its `float_roundtrip` feature may read a
/// printed float back one unit off).
fn assert_same_message(a: &Message, b: &Message, text: &[u8]) {
    let va = serde_json::to_value(a).expect("serialises");
    let vb = serde_json::to_value(b).expect("serialises");
    assert!(
        same_json(&va, &vb),
        "re-parsing {} changed it: {va} vs {vb}",
        String::from_utf8_lossy(text)
    );
    match (a, b) {
        (Message::Request(x), Message::Request(y)) => assert_eq!(x.id, y.id),
        (Message::Response(x), Message::Response(y)) => assert_eq!(x.id, y.id),
        (Message::Notification(_), Message::Notification(_)) => {}
        _ => panic!("re-parsing changed the kind of message: {a:?} vs {b:?}"),
    }
}

fn same_json(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) if x.is_f64() || y.is_f64() => {
            match (x.as_f64(), y.as_f64()) {
                (Some(x), Some(y)) => x == y || (x - y).abs() <= 1e-15 * x.abs().max(y.abs()),
                _ => false,
            }
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same_json(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| same_json(v, w)))
        }
        _ => a == b,
    }
}

/// A parsed message agrees with the JSON it came from; a request keeps its id exactly.
fn check_message_against(m: &Message, v: &Value) {
    let obj = v.as_object().expect("a message came from a JSON object");
    match m {
        Message::Request(r) => {
            let id = obj.get("id").expect("a request has an id member");
            assert_eq!(&r.id.to_value(), id, "request id not preserved");
            let text = serde_json::to_string(&r.id).expect("serialises");
            assert_eq!(
                text,
                id.to_string(),
                "request id does not serialise to the same JSON"
            );
            assert_eq!(obj.get("method"), Some(&Value::String(r.method.clone())));
        }
        Message::Notification(n) => {
            assert!(!obj.contains_key("id"), "a notification with an id member");
            assert_eq!(obj.get("method"), Some(&Value::String(n.method.clone())));
        }
        Message::Response(r) => {
            assert!(!obj.contains_key("method"), "a response with a method");
            match &r.id {
                Some(id) => assert_eq!(obj.get("id"), Some(&id.to_value())),
                None => assert!(matches!(obj.get("id"), None | Some(Value::Null))),
            }
            match &r.outcome {
                Ok(result) => assert_eq!(obj.get("result"), Some(result)),
                Err(_) => assert!(obj.contains_key("error")),
            }
        }
    }
}

/// An id reported with a -32600 is the input's own `id` member; an attempted response (no
/// `method`, a `result` or an `error`) is marked as one, so that it is not answered.
fn check_invalid(inv: &InvalidMessage, v: &Value) {
    if let Some(id) = &inv.id {
        let member = v
            .get("id")
            .expect("an id was reported, so the input has one");
        assert_eq!(&id.to_value(), member, "-32600 reported a different id");
    }
    let attempted_response = v.as_object().is_some_and(|o| {
        !o.contains_key("method") && (o.contains_key("result") || o.contains_key("error"))
    });
    assert_eq!(
        inv.is_response, attempted_response,
        "is_response is {} for {v}",
        inv.is_response
    );
}

/// Input that serde skips without validating when it is in an ignored member.
/// JSON by RFC 8259's grammar: UTF-8, and every value well formed, whether or not serde_json
/// could decode it (serde's `IgnoredAny` checks the syntax without decoding strings or numbers).
fn grammar_valid(data: &[u8]) -> bool {
    std::str::from_utf8(data)
        .is_ok_and(|text| serde_json::from_str::<serde::de::IgnoredAny>(text).is_ok())
}
