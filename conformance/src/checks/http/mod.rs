//! Streamable HTTP (`http.*`): what only the HTTP transport has (statuses, media types,
//! sessions, the GET stream, `Origin`, the protocol version header, SSE, and in 2026-07-28 the
//! mirrored headers). Each check sends its own requests ([`wire`]); over stdio they are NOT
//! APPLICABLE. Levels are the words of the cited sentence: 2025-11-25 `basic/transports.mdx`
//! §Streamable HTTP for the legacy era, 2026-07-28 `basic/transports/streamable-http.mdx`.

mod legacy;
mod modern;
mod sse;
mod streams;
mod wire;

use futures::FutureExt;

use crate::catalog::Check;
use crate::check::{Level, Transport};
use crate::ids;

const LEGACY: &str = "basic/transports.mdx (2025-11-25), Streamable HTTP";
const MODERN: &str = "2026-07-28 basic/transports/streamable-http.mdx";

fn spec(page: &str, section: &str) -> String {
    format!("{page}, {section}")
}

/// Only on Streamable HTTP.
fn http(c: Check) -> Check {
    c.transport(Transport::Http)
}

pub fn checks() -> Vec<Check> {
    [posts(), sessions(), headers(), modern()].concat()
}

/// POSTs: a notification's and a request's replies, what `Accept` they need, SSE replies.
fn posts() -> Vec<Check> {
    vec![
        http(
            Check::code(
                ids::HTTP_NOTIFICATION_202,
                Level::Must,
                "a POST of a notification the server accepts (notifications/initialized) gets 202 Accepted with no body",
                &spec(LEGACY, "Sending Messages to the Server"),
                |ctx| legacy::notification_202(ctx).boxed(),
            )
            .quote("If the server accepts the input, the server MUST return HTTP status code 202 Accepted with no body.")
            .because("an HTTP error status is the other answer the text allows (it cannot accept the input): reported as a pass"),
        ),
        http(
            Check::code(
                ids::HTTP_REQUEST_CONTENT_TYPE,
                Level::Must,
                "a POST of a request (initialize, ping) gets Content-Type application/json or text/event-stream",
                &spec(LEGACY, "Sending Messages to the Server"),
                |ctx| legacy::request_content_type(ctx).boxed(),
            )
            .quote("If the input is a JSON-RPC request, the server MUST either return Content-Type: text/event-stream, to initiate an SSE stream, or Content-Type: application/json, to return one JSON object."),
        ),
        http(
            Check::code(
                ids::HTTP_ACCEPT_JSON_ONLY,
                Level::Info,
                "what a POST of a request whose Accept lists only application/json gets",
                &spec(LEGACY, "Sending Messages to the Server"),
                |ctx| legacy::accept_json_only(ctx).boxed(),
            )
            .quote("The client MUST include an Accept header, listing both application/json and text/event-stream as supported content types.")
            .because("it binds the client: what the server does with a narrower Accept is reported"),
        ),
        http(
            Check::code(
                ids::HTTP_SSE_RESPONSE,
                Level::Should,
                "an SSE reply to a request carries its JSON-RPC response: events whose data is each one JSON-RPC message, the response among them",
                &spec(LEGACY, "Sending Messages to the Server"),
                |ctx| sse::response(ctx).boxed(),
            )
            .quote("The SSE stream SHOULD eventually include a JSON-RPC response for the JSON-RPC request sent in the POST body."),
        ),
        http(
            Check::code(
                ids::HTTP_SSE_ENDS,
                Level::Should,
                "an SSE reply to a request ends once its response is sent",
                &spec(LEGACY, "Sending Messages to the Server"),
                |ctx| sse::ends(ctx).boxed(),
            )
            .quote("After the JSON-RPC response has been sent, the server SHOULD terminate the SSE stream."),
        ),
    ]
}

/// Sessions (`Mcp-Session-Id`) and the GET stream.
fn sessions() -> Vec<Check> {
    vec![
        http(
            Check::code(
                ids::HTTP_SESSION_ID_VISIBLE_ASCII,
                Level::Must,
                "an Mcp-Session-Id given with the InitializeResult holds only visible ASCII (0x21-0x7E)",
                &spec(LEGACY, "Session Management"),
                |ctx| legacy::session_id_ascii(ctx).boxed(),
            )
            .quote("The session ID MUST only contain visible ASCII characters (ranging from 0x21 to 0x7E)."),
        ),
        http(
            Check::code(
                ids::HTTP_SESSION_REQUIRED,
                Level::Should,
                "once a session is made, a request without Mcp-Session-Id gets 400 Bad Request",
                &spec(LEGACY, "Session Management"),
                |ctx| legacy::session_required(ctx).boxed(),
            )
            .quote("Servers that require a session ID SHOULD respond to requests without an MCP-Session-Id header (other than initialization) with HTTP 400 Bad Request."),
        ),
        http(
            Check::code(
                ids::HTTP_SESSION_UNKNOWN,
                Level::Info,
                "what a request with an Mcp-Session-Id the server never issued gets (404, as for a terminated session, is what a client expects)",
                &spec(LEGACY, "Session Management"),
                |ctx| legacy::session_unknown(ctx).boxed(),
            )
            .quote("The server MAY terminate the session at any time, after which it MUST respond to requests containing that session ID with HTTP 404 Not Found.")
            .because("the text binds sessions the server terminated; an id it never issued is not named"),
        ),
        http(
            Check::code(
                ids::HTTP_SESSION_DELETE,
                Level::Must,
                "DELETE with the session id ends the session (later requests with it get 404), or gets 405 (not supported)",
                &spec(LEGACY, "Session Management"),
                |ctx| legacy::session_delete(ctx).boxed(),
            )
            .quote("The server MAY terminate the session at any time, after which it MUST respond to requests containing that session ID with HTTP 404 Not Found. / The server MAY respond to this request with HTTP 405 Method Not Allowed, indicating that the server does not allow clients to terminate sessions."),
        ),
        http(
            Check::code(
                ids::HTTP_GET_STREAM,
                Level::Must,
                "GET on the endpoint (Accept: text/event-stream) gets Content-Type text/event-stream or 405",
                &spec(LEGACY, "Listening for Messages from the Server"),
                |ctx| legacy::get_stream(ctx).boxed(),
            )
            .quote("The server MUST either return Content-Type: text/event-stream in response to this HTTP GET, or else return HTTP 405 Method Not Allowed, indicating that the server does not offer an SSE stream at this endpoint."),
        ),
        http(
            Check::code(
                ids::HTTP_GET_STREAM_NO_RESPONSE,
                Level::Must,
                "the GET stream, opened without Last-Event-ID, carries no JSON-RPC response (read while a ping is POSTed and answered)",
                &spec(LEGACY, "Listening for Messages from the Server"),
                |ctx| streams::get_no_response(ctx).boxed(),
            )
            .quote("The server MUST NOT send a JSON-RPC response on the stream unless resuming a stream associated with a previous client request."),
        ),
        http(
            Check::code(
                ids::HTTP_SSE_EVENT_IDS_UNIQUE,
                Level::Must,
                "SSE event ids, where the server gives them, are unique across the streams of a session (initialize, two pings, the GET stream)",
                &spec(LEGACY, "Resumability and Redelivery"),
                |ctx| streams::event_ids_unique(ctx).boxed(),
            )
            .quote("If present, the ID MUST be globally unique across all streams within that session—or all streams with that specific client, if session management is not in use."),
        ),
    ]
}

/// The protocol version header, `Origin`, and what an HTTP error's body holds.
fn headers() -> Vec<Check> {
    vec![
        http(
            Check::code(
                ids::HTTP_PROTOCOL_VERSION_INVALID,
                Level::Must,
                "a request with MCP-Protocol-Version 1999-01-01 after initialize gets 400 Bad Request",
                &spec(LEGACY, "Protocol Version Header"),
                |ctx| legacy::version_invalid(ctx).boxed(),
            )
            .quote("If the server receives a request with an invalid or unsupported MCP-Protocol-Version, it MUST respond with 400 Bad Request."),
        ),
        http(
            Check::code(
                ids::HTTP_ORIGIN_FORBIDDEN,
                Level::Must,
                "a POST with a foreign Origin (http://evil.example) gets 403 Forbidden (DNS rebinding)",
                &spec(LEGACY, "Security Warning"),
                |ctx| legacy::origin_forbidden(ctx).boxed(),
            )
            .quote("If the Origin header is present and invalid, servers MUST respond with HTTP 403 Forbidden.")
            .any_era(),
        ),
        http(
            Check::code(
                ids::HTTP_ORIGIN_FORBIDDEN_GET_DELETE,
                Level::Must,
                "a GET and a DELETE with a foreign Origin (http://evil.example) get 403 Forbidden, as a POST does (legacy: with the session id)",
                &spec(LEGACY, "Security Warning"),
                |ctx| legacy::origin_forbidden_get_delete(ctx).boxed(),
            )
            .quote("Servers MUST validate the Origin header on all incoming connections to prevent DNS rebinding attacks / If the Origin header is present and invalid, servers MUST respond with HTTP 403 Forbidden.")
            .any_era(),
        ),
        http(
            Check::code(
                ids::HTTP_ERROR_BODY,
                Level::Info,
                "what the body of an HTTP error holds (a JSON-RPC error response without an id, which the text allows, or nothing)",
                &spec(LEGACY, "Security Warning; Sending Messages to the Server"),
                |ctx| legacy::error_body(ctx).boxed(),
            )
            .quote("The HTTP response body MAY comprise a JSON-RPC error response that has no id")
            .because("a MAY: what comes is reported"),
        ),
    ]
}

/// 2026-07-28: no GET or DELETE, and the mirrored headers.
fn modern() -> Vec<Check> {
    vec![
        http(
            Check::code(
                ids::HTTP_MODERN_GET_DELETE_405,
                Level::Should,
                "a 2026-07-28-only server answers GET and DELETE on the endpoint with 405 Method Not Allowed",
                &spec(MODERN, "Backward Compatibility, Earlier Streamable HTTP Revisions"),
                |ctx| modern::get_delete_405(ctx).boxed(),
            )
            .quote("A server that supports only this revision and receives such traffic from an older client SHOULD respond as follows: HTTP GET or DELETE to the MCP endpoint: respond with 405 Method Not Allowed.")
            .modern(),
        ),
        http(
            Check::code(
                ids::HTTP_MODERN_HEADER_MISSING,
                Level::Must,
                "a 2026-07-28 request without Mcp-Method gets 400 with JSON-RPC error -32020 (HeaderMismatch)",
                &spec(MODERN, "Request Metadata, Server Validation"),
                |ctx| modern::header_missing(ctx).boxed(),
            )
            .quote("When rejecting a request due to header validation failure, servers MUST return HTTP status 400 Bad Request and MUST include a JSON-RPC error response using the following error code: -32020 / A required standard header (MCP-Protocol-Version, Mcp-Method, Mcp-Name) is missing.")
            .modern(),
        ),
        http(
            Check::code(
                ids::HTTP_MODERN_HEADER_MISMATCH,
                Level::Must,
                "2026-07-28 requests whose Mcp-Method or Mcp-Name disagrees with the body get 400 with -32020",
                &spec(MODERN, "Request Metadata, Server Validation"),
                |ctx| modern::header_mismatch(ctx).boxed(),
            )
            .quote("Servers that process the request body MUST reject requests where the values specified in the headers do not match the corresponding values in the request body. / servers MUST return HTTP status 400 Bad Request and MUST include a JSON-RPC error response using the following error code: -32020")
            .modern(),
        ),
        http(
            Check::code(
                ids::HTTP_MODERN_UNSUPPORTED_VERSION_400,
                Level::Must,
                "a 2026-07-28 request for protocol version 1999-01-01 (body and header agreeing) gets 400 Bad Request with JSON-RPC error -32022",
                &spec(MODERN, "Request Metadata, Protocol Version Header"),
                |ctx| modern::unsupported_version_400(ctx).boxed(),
            )
            .quote("If the server does not implement the requested protocol version (whether the version is unknown to the server, or is a known version the server has chosen not to support), it MUST respond with 400 Bad Request and an UnsupportedProtocolVersionError listing its supported versions.")
            .modern(),
        ),
        http(
            Check::code(
                ids::HTTP_MODERN_UNKNOWN_METHOD_404,
                Level::Must,
                "a 2026-07-28 request for a method no server implements gets 404 Not Found with JSON-RPC error -32601",
                &spec(MODERN, "Request Metadata, Protocol Version Header"),
                |ctx| modern::unknown_method_404(ctx).boxed(),
            )
            .quote("If the server does not implement the requested RPC method, it MUST respond with 404 Not Found and a JSON-RPC error with code -32601 (Method not found).")
            .modern(),
        ),
    ]
}
