//! The client side the harness plays toward the server: the client capabilities it declares
//! (`--client-capabilities`), and the fixed, schema-valid replies it gives the server's
//! requests for them, so servers that need them can be exercised. A request for a capability
//! it did not declare gets -32601 (`basic/lifecycle.mdx`, Operation: "Only use capabilities
//! that were successfully negotiated").

use serde_json::{json, Map, Value};

use crate::config::ClientCapability;

/// The `ClientCapabilities` object declaring `declared` (each as `{}`).
pub fn capabilities(declared: &[ClientCapability]) -> Value {
    let map: Map<String, Value> = declared
        .iter()
        .map(|c| (c.as_str().to_owned(), json!({})))
        .collect();
    Value::Object(map)
}

/// The client capability a server request needs, if it needs one.
pub fn needed(method: &str) -> Option<ClientCapability> {
    match method {
        "roots/list" => Some(ClientCapability::Roots),
        "sampling/createMessage" => Some(ClientCapability::Sampling),
        "elicitation/create" => Some(ClientCapability::Elicitation),
        _ => None,
    }
}

/// The reply to the server's request `method` under `id`, given what the harness declared:
/// a fixed result for a declared capability (and `ping`), else -32601.
pub fn reply(id: &Value, method: &str, declared: &[ClientCapability]) -> Value {
    let result = match needed(method) {
        Some(c) if declared.contains(&c) => Some(fixed_result(c)),
        Some(_) => None,
        None => (method == "ping").then(|| json!({})),
    };
    match result {
        Some(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
        None => json!({"jsonrpc": "2.0", "id": id, "error": {
            "code": -32601,
            "message": format!("Method not found: the harness does not serve {method} \
                                (declare it with --client-capabilities)"),
        }}),
    }
}

/// 2025-11-25 `schema.ts`: ListRootsResult, CreateMessageResult, ElicitResult.
fn fixed_result(c: ClientCapability) -> Value {
    match c {
        ClientCapability::Roots => json!({"roots": [{"uri": "file:///tmp", "name": "tmp"}]}),
        ClientCapability::Sampling => json!({
            "role": "assistant",
            "content": {"type": "text", "text": "mcp-conformance"},
            "model": "mcp-conformance",
            "stopReason": "endTurn",
        }),
        ClientCapability::Elicitation => json!({"action": "decline"}),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn declared_requests_get_fixed_results_and_others_32601() {
        let declared = [ClientCapability::Roots, ClientCapability::Sampling];
        assert_eq!(
            capabilities(&declared),
            json!({"roots": {}, "sampling": {}})
        );
        let roots = reply(&json!(3), "roots/list", &declared);
        assert_eq!(roots["result"]["roots"][0]["uri"], "file:///tmp");
        let sampling = reply(&json!("s"), "sampling/createMessage", &declared);
        assert_eq!(sampling["id"], "s");
        assert_eq!(sampling["result"]["model"], "mcp-conformance");
        assert_eq!(sampling["result"]["role"], "assistant");
        let elicit = reply(&json!(4), "elicitation/create", &declared);
        assert_eq!(elicit["error"]["code"], -32601);
        let elicit = reply(
            &json!(4),
            "elicitation/create",
            &[ClientCapability::Elicitation],
        );
        assert_eq!(elicit["result"], json!({"action": "decline"}));
        assert_eq!(reply(&json!(5), "ping", &[])["result"], json!({}));
        assert_eq!(reply(&json!(6), "x/y", &[])["error"]["code"], -32601);
    }
}
