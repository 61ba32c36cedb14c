//! Elicitation (`client/elicitation.mdx`): a server asks, through the client, for structured
//! data from the user. A client that sets [`ClientOptions::elicitation`](crate::ClientOptions)
//! declares the capability in `initialize` (form mode: `{"form": {}}`) and answers
//! `elicitation/create` with its handler; one that does not refuses it with -32601, as any
//! method it does not offer. Legacy era only: 2026-07-28 has no server requests.
//!
//! Defaults: "Clients that support defaults SHOULD pre-populate form fields with these values"
//! (form mode). A handler that accepts gets the schema's `default` of every field it left out
//! ([`apply_defaults`]), as a form shown pre-filled and submitted untouched would; turn that off
//! with [`Elicitation::apply_defaults`].
//!
//! ```no_run
//! use mcp_client::elicitation::{ElicitResponse, Elicitation};
//! use mcp_client::ClientOptions;
//! use serde_json::json;
//!
//! let options = ClientOptions {
//!     elicitation: Some(Elicitation::new(|request| async move {
//!         println!("the server asks: {}", request.message);
//!         let mut answer = serde_json::Map::new();
//!         answer.insert("name".into(), json!("Ada")); // the fields the user filled in
//!         ElicitResponse::accept(answer)               // the rest get their defaults
//!     })),
//!     ..ClientOptions::default()
//! };
//! ```

use std::fmt;
use std::future::Future;
use std::sync::Arc;

use futures::future::BoxFuture;
use mcp_protocol::{ErrorCode, ErrorObject};
use serde::Serialize;
use serde_json::{json, Map, Value};

/// The server request this module answers.
pub const METHOD: &str = "elicitation/create";

/// A form-mode `elicitation/create`: what to ask and the shape of the answer.
#[derive(Debug, Clone, PartialEq)]
pub struct ElicitRequest {
    /// Why the server asks, for the user.
    pub message: String,
    /// A flat object schema of primitive fields (`properties`, `required`, each field's
    /// `type`, `title`, `description`, `default`, `enum`, …).
    pub requested_schema: Value,
}

/// What the user did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ElicitAction {
    /// Submitted the form.
    Accept,
    /// Explicitly said no.
    Decline,
    /// Dismissed it without choosing.
    Cancel,
}

/// The answer to an [`ElicitRequest`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ElicitResponse {
    pub action: ElicitAction,
    /// The submitted fields (accept only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content: Option<Map<String, Value>>,
}

impl ElicitResponse {
    pub fn accept(content: Map<String, Value>) -> Self {
        ElicitResponse {
            action: ElicitAction::Accept,
            content: Some(content),
        }
    }

    pub fn decline() -> Self {
        ElicitResponse {
            action: ElicitAction::Decline,
            content: None,
        }
    }

    pub fn cancel() -> Self {
        ElicitResponse {
            action: ElicitAction::Cancel,
            content: None,
        }
    }
}

type Handler = Arc<dyn Fn(ElicitRequest) -> BoxFuture<'static, ElicitResponse> + Send + Sync>;

/// How the client answers elicitation: a handler (the user interface) and whether accepted
/// answers get the schema's defaults (yes by default).
#[derive(Clone)]
pub struct Elicitation {
    handler: Handler,
    apply_defaults: bool,
}

impl fmt::Debug for Elicitation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Elicitation")
            .field("apply_defaults", &self.apply_defaults)
            .finish_non_exhaustive()
    }
}

impl Elicitation {
    /// Answers each form-mode request with `handler`. It runs in a task of its own, so a
    /// handler that waits for a person holds up nothing else; it is dropped if the connection
    /// closes first.
    pub fn new<F, Fut>(handler: F) -> Self
    where
        F: Fn(ElicitRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ElicitResponse> + Send + 'static,
    {
        Elicitation {
            handler: Arc::new(move |request| Box::pin(handler(request))),
            apply_defaults: true,
        }
    }

    /// Whether an accepted answer gets the `default` of each field it left out (default: yes).
    pub fn apply_defaults(mut self, apply: bool) -> Self {
        self.apply_defaults = apply;
        self
    }

    /// The capability declared in `initialize`: form mode ("an empty capabilities object is
    /// equivalent to declaring support for `form` mode only"; spelled out for clarity).
    pub(crate) fn capability() -> Value {
        json!({"form": {}})
    }

    /// The result for an `elicitation/create` with `params`, or the error to answer with.
    pub(crate) async fn answer(&self, params: Option<Value>) -> Result<Value, ErrorObject> {
        let request = parse(params)?;
        let schema = request.requested_schema.clone();
        let mut response = (self.handler)(request).await;
        if response.action == ElicitAction::Accept {
            let content = response.content.get_or_insert_with(Map::new);
            if self.apply_defaults {
                apply_defaults(&schema, content);
            }
        } else {
            response.content = None;
        }
        serde_json::to_value(&response)
            .map_err(|e| ErrorObject::new(ErrorCode::INTERNAL_ERROR, e.to_string()))
    }
}

/// Puts in `content` the `default` of every property of `schema` that `content` lacks.
/// Fields the user gave are kept as they are; fields without a default stay absent.
pub fn apply_defaults(schema: &Value, content: &mut Map<String, Value>) {
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return;
    };
    for (name, property) in properties {
        if let Some(default) = property.get("default") {
            if !content.contains_key(name) {
                content.insert(name.clone(), default.clone());
            }
        }
    }
}

/// A form-mode request from `params`; anything else is -32602 (invalid params), URL mode
/// included: this client declares form mode only, and "Servers MUST NOT send elicitation
/// requests with modes that are not supported by the client".
fn parse(params: Option<Value>) -> Result<ElicitRequest, ErrorObject> {
    let invalid = |reason: String| ErrorObject::new(ErrorCode::INVALID_PARAMS, reason);
    let Some(Value::Object(mut params)) = params else {
        return Err(invalid("elicitation/create needs params, an object".into()));
    };
    match params.get("mode") {
        None => {}
        Some(Value::String(mode)) if mode == "form" => {}
        Some(mode) => {
            return Err(invalid(format!(
                "elicitation mode {mode} is not supported: this client declared form mode only"
            )))
        }
    }
    let Some(Value::String(message)) = params.remove("message") else {
        return Err(invalid(
            "elicitation/create needs a string `message`".into(),
        ));
    };
    let requested_schema = match params.remove("requestedSchema") {
        Some(schema @ Value::Object(_)) => schema,
        _ => {
            return Err(invalid(
                "form-mode elicitation/create needs an object `requestedSchema`".into(),
            ))
        }
    };
    Ok(ElicitRequest {
        message,
        requested_schema,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schema() -> Value {
        json!({"type": "object", "properties": {
            "name": {"type": "string", "default": "John Doe"},
            "age": {"type": "integer", "default": 30},
            "score": {"type": "number", "default": 95.5},
            "status": {"type": "string", "enum": ["active", "inactive"], "default": "active"},
            "verified": {"type": "boolean", "default": true},
            "nickname": {"type": "string"}
        }})
    }

    fn object(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(map) => map,
            other => panic!("not an object: {other}"),
        }
    }

    #[test]
    fn defaults_fill_omitted_fields_only() {
        let mut content = object(json!({"name": "Ada", "verified": false}));
        apply_defaults(&schema(), &mut content);
        assert_eq!(
            Value::Object(content),
            json!({"name": "Ada", "age": 30, "score": 95.5, "status": "active", "verified": false})
        );
        let mut untouched = Map::new();
        apply_defaults(&json!({"type": "object"}), &mut untouched);
        assert!(untouched.is_empty());
    }

    fn request(params: Value) -> Result<ElicitRequest, ErrorObject> {
        parse(Some(params))
    }

    #[test]
    fn form_mode_requests_are_read_and_others_refused() {
        let ok = request(json!({"message": "m", "requestedSchema": schema()})).unwrap();
        assert_eq!((ok.message.as_str(), ok.requested_schema), ("m", schema()));
        let form = json!({"mode": "form", "message": "m", "requestedSchema": {}});
        assert!(request(form).is_ok());
        for bad in [
            json!({"mode": "url", "message": "m", "url": "https://x", "elicitationId": "e"}),
            json!({"requestedSchema": {}}),
            json!({"message": "m"}),
            json!({"message": "m", "requestedSchema": []}),
            json!([]),
        ] {
            let error = request(bad.clone()).unwrap_err();
            assert_eq!(error.code, ErrorCode::INVALID_PARAMS, "{bad}");
        }
        assert_eq!(parse(None).unwrap_err().code, ErrorCode::INVALID_PARAMS);
    }

    #[tokio::test]
    async fn answers_apply_defaults_on_accept_only() {
        let params = json!({"message": "m", "requestedSchema": schema()});
        let accept = Elicitation::new(|_| async { ElicitResponse::accept(Map::new()) });
        let value = accept.answer(Some(params.clone())).await.unwrap();
        assert_eq!(
            value,
            json!({"action": "accept", "content": {
                "name": "John Doe", "age": 30, "score": 95.5, "status": "active", "verified": true
            }})
        );
        let raw = accept.clone().apply_defaults(false);
        let value = raw.answer(Some(params.clone())).await.unwrap();
        assert_eq!(value, json!({"action": "accept", "content": {}}));
        let decline = Elicitation::new(|_| async {
            ElicitResponse {
                action: ElicitAction::Decline,
                content: Some(Map::new()),
            }
        });
        let value = decline.answer(Some(params)).await.unwrap();
        assert_eq!(value, json!({"action": "decline"}));
        let cancel = Elicitation::new(|_| async { ElicitResponse::cancel() });
        let params = json!({"message": "m", "requestedSchema": {}});
        assert_eq!(
            cancel.answer(Some(params)).await.unwrap(),
            json!({"action": "cancel"})
        );
    }
}
