//! What a running call may send the client, decided once for every transport: server requests
//! (legacy: only what the client declared; 2026-07-28: the multi round-trip pattern,
//! `basic/patterns/mrtr.mdx`) and notifications (progress for the request's token, log
//! messages at or above the client's level, list changes).

use mcp_protocol::mcp::{modern, ProtocolVersion};
use serde_json::{json, Map, Value};

use crate::params::ServerParams;
use crate::peer::{PeerError, Withheld};

/// `notifications/progress` (`utilities/progress.mdx`).
pub(crate) const PROGRESS: &str = "notifications/progress";
/// `notifications/message` (`server/utilities/logging.mdx`).
pub(crate) const LOG_MESSAGE: &str = "notifications/message";
/// `notifications/tools/list_changed` (`server/tools.mdx`, List Changed Notification).
pub(crate) const TOOLS_LIST_CHANGED: &str = "notifications/tools/list_changed";
/// `logging/setLevel` (legacy era only).
pub(crate) const SET_LEVEL: &str = "logging/setLevel";

/// What a call's request said about itself, kept while it runs.
#[derive(Debug, Default)]
pub(crate) struct CallMeta {
    /// `_meta.progressToken` (a string or an integer).
    pub(crate) progress_token: Option<Value>,
    /// The last progress sent for it: the next must be greater.
    pub(crate) last_progress: Option<f64>,
    /// 2026-07-28: the request's own log level, its client capabilities and the answers a
    /// retry carries (`inputResponses`).
    pub(crate) modern: Option<ModernMeta>,
}

#[derive(Debug, Default)]
pub(crate) struct ModernMeta {
    pub(crate) log_level: Option<usize>,
    pub(crate) capabilities: Map<String, Value>,
    pub(crate) input_responses: Map<String, Value>,
}

impl CallMeta {
    /// Takes `_meta` and `inputResponses` out of a `tools/call`'s params (moved, not copied:
    /// the call itself is parsed from the rest, which does not use them).
    pub(crate) fn take(params: Option<&mut ServerParams>, version: ProtocolVersion) -> CallMeta {
        let Some(params) = params else {
            return CallMeta::default();
        };
        let mut meta = match params.take("_meta") {
            Some(Value::Object(meta)) => meta,
            _ => Map::new(),
        };
        let progress_token = meta
            .remove("progressToken")
            .filter(|t| t.is_string() || t.is_i64() || t.is_u64());
        let modern = version.is_modern().then(|| ModernMeta {
            log_level: meta
                .get(modern::META_LOG_LEVEL)
                .and_then(Value::as_str)
                .and_then(level_index),
            capabilities: object(meta.remove(modern::META_CLIENT_CAPABILITIES)),
            input_responses: object(params.take("inputResponses")),
        });
        CallMeta {
            progress_token,
            last_progress: None,
            modern,
        }
    }
}

fn object(value: Option<Value>) -> Map<String, Value> {
    match value {
        Some(Value::Object(map)) => map,
        _ => Map::new(),
    }
}

/// A log level's rank (`debug` 0 … `emergency` 7), RFC 5424 order.
pub(crate) fn level_index(level: &str) -> Option<usize> {
    modern::LOG_LEVELS.iter().position(|l| *l == level)
}

/// The client capability a server request needs (`client/roots.mdx`, `client/sampling.mdx`,
/// `client/elicitation.mdx`: servers MUST NOT send what the client did not declare).
pub(crate) fn needed_capability(method: &str) -> Option<&'static str> {
    match method {
        "roots/list" => Some("roots"),
        "sampling/createMessage" => Some("sampling"),
        "elicitation/create" => Some("elicitation"),
        _ => None,
    }
}

/// The key a 2026-07-28 input request is sent under, and its answer looked up by: the method,
/// so a retry's `inputResponses` answers the same request whichever run of the call asks.
pub(crate) fn input_key(method: &str) -> &str {
    method
}

/// What the server itself declared, which bounds the notifications it may send.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Declared {
    pub(crate) logging: bool,
    pub(crate) list_changed: bool,
}

/// A notification's params as sent, or why it is not sent. `session_level`: the legacy
/// session's `logging/setLevel` (`None`: never set, every level goes).
pub(crate) fn notification(
    method: &str,
    params: Option<Value>,
    meta: &mut CallMeta,
    declared: Declared,
    session_level: Option<usize>,
) -> Result<Option<Value>, PeerError> {
    let withheld = |w| Err(PeerError::Withheld(w));
    match method {
        PROGRESS => {
            let Some(token) = &meta.progress_token else {
                return withheld(Withheld::NoProgressToken);
            };
            // "The progress value MUST increase with each notification".
            let progress = params.as_ref().and_then(|p| p.get("progress")?.as_f64());
            let Some(progress) = progress.filter(|p| meta.last_progress.is_none_or(|l| *p > l))
            else {
                return withheld(Withheld::NotIncreasing);
            };
            meta.last_progress = Some(progress);
            let mut params = params.unwrap_or_else(|| json!({}));
            if let Value::Object(map) = &mut params {
                map.insert("progressToken".into(), token.clone());
            }
            Ok(Some(params))
        }
        LOG_MESSAGE => {
            if !declared.logging {
                return withheld(Withheld::NotDeclared("logging"));
            }
            let threshold = match &meta.modern {
                Some(modern) => match modern.log_level {
                    Some(level) => Some(level),
                    None => return withheld(Withheld::NoLogLevel),
                },
                None => session_level,
            };
            let level = params
                .as_ref()
                .and_then(|p| p.get("level"))
                .and_then(Value::as_str)
                .and_then(level_index);
            match (level, threshold) {
                (Some(level), Some(threshold)) if level < threshold => {
                    withheld(Withheld::BelowLevel(modern::LOG_LEVELS[threshold]))
                }
                _ => Ok(params),
            }
        }
        TOOLS_LIST_CHANGED if meta.modern.is_some() => withheld(Withheld::NoSubscription),
        TOOLS_LIST_CHANGED if !declared.list_changed => {
            withheld(Withheld::NotDeclared("tools.listChanged"))
        }
        _ => Ok(params),
    }
}

/// A 2026-07-28 call's request to the client: the answer its retry carries, or the
/// `inputRequests` entry of the `input_required` result that ends this run of the call.
pub(crate) enum ModernAsk {
    Answered(Value),
    InputRequired(Value),
}

pub(crate) fn modern_ask(
    method: &str,
    params: Option<Value>,
    meta: &ModernMeta,
) -> Result<ModernAsk, PeerError> {
    if let Some(answer) = meta.input_responses.get(input_key(method)) {
        return Ok(ModernAsk::Answered(answer.clone()));
    }
    if let Some(capability) = needed_capability(method) {
        if !meta.capabilities.contains_key(capability) {
            return Err(PeerError::NotDeclared(capability, method.to_owned()));
        }
    } else {
        // Only roots, sampling and elicitation travel as input requests (`schema.ts`,
        // `InputRequest`).
        return Err(PeerError::Stateless);
    }
    let mut request = json!({ "method": method });
    if let Some(params) = params {
        request["params"] = params;
    }
    let mut requests = Map::new();
    requests.insert(input_key(method).to_owned(), request);
    Ok(ModernAsk::InputRequired(
        json!({ "inputRequests": requests }),
    ))
}
