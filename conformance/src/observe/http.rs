//! The Streamable HTTP proxy: every request the client makes is forwarded to the upstream MCP
//! endpoint (method, query, body, and every header but the hop-by-hop ones and `Host`, which
//! any proxy changes), and the response streamed back as it comes (status, headers but the
//! hop-by-hop ones, the body chunk by chunk: an SSE stream is never buffered). A copy of each
//! request and of each response chunk goes to the judge.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderName, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::serve::ListenerExt;
use axum::Router;
use futures::StreamExt;

use super::cli::Options;
use super::feed::{Feed, Tap};
use super::report::Subject;
use super::{usage, Observer, START, USAGE};
use crate::clients::timeline::{Exchange, Wire};
use crate::stops::Stops;

/// The largest request body forwarded (413 past it).
const MAX_BODY: usize = 16 * 1024 * 1024;
/// How long a client may take to send a request body (408 past it).
const BODY_WAIT: Duration = Duration::from_secs(30);
/// How long the upstream may take to start its response (504 past it); a tool may run long.
const HEAD_WAIT: Duration = Duration::from_secs(300);
const CONNECT_WAIT: Duration = Duration::from_secs(10);

/// Headers of one connection, not of the message (RFC 9110 §7.6.1), and `Host`: not forwarded.
const HOP_BY_HOP: &[&str] = &[
    "connection",
    "keep-alive",
    "proxy-connection",
    "proxy-authenticate",
    "proxy-authorization",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
    "host",
];

/// Header values never written to a report or transcript.
const SECRET: &[&str] = &["authorization", "cookie", "proxy-authorization"];

#[derive(Debug)]
struct Proxy {
    client: reqwest::Client,
    upstream: reqwest::Url,
    tap: Tap,
    next: AtomicU64,
}

/// Serves until SIGINT, SIGTERM or SIGHUP; exits 1 if a check failed, else 0.
pub(super) async fn run(opts: &Options, listen: SocketAddr, upstream: &str) -> u8 {
    let url = match reqwest::Url::parse(upstream) {
        Ok(url) if matches!(url.scheme(), "http" | "https") => url,
        _ => {
            return usage(&format!(
                "--upstream {upstream:?} is not an http:// or https:// URL"
            ))
        }
    };
    let client = match reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .connect_timeout(CONNECT_WAIT)
        .build()
    {
        Ok(client) => client,
        Err(e) => {
            eprintln!("mcp-conformance observe: cannot make an HTTP client: {e}");
            return 1;
        }
    };
    let mut signals = match Stops::install() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("mcp-conformance observe: cannot catch SIGTERM/SIGINT/SIGHUP: {e}");
            return 1;
        }
    };
    let listener = match tokio::net::TcpListener::bind(listen).await {
        Ok(l) => l,
        Err(e) => {
            eprintln!("mcp-conformance observe: cannot listen on {listen}: {e}");
            return START;
        }
    };
    let subject = Subject {
        name: upstream.to_owned(),
        wire: Wire::Http,
    };
    let observer = match Observer::start(opts, subject) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("mcp-conformance observe: cannot open the transcript file: {e}");
            return USAGE;
        }
    };
    let bound = listener.local_addr().map_or(listen, |a| a);
    eprintln!("observing on http://{bound}/ -> {upstream}");
    let proxy = Arc::new(Proxy {
        client,
        upstream: url,
        tap: observer.tap.clone(),
        next: AtomicU64::new(0),
    });
    let app = Router::new().fallback(forward).with_state(proxy);
    // Small writes (a response head, then its body) go out at once, not after the peer's ACK.
    let listener = listener.tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    });
    tokio::select! {
        served = axum::serve(listener, app) => {
            if let Err(e) = served {
                eprintln!("mcp-conformance observe: the proxy stopped: {e}");
            }
        }
        _ = signals.next() => {}
    }
    match observer.finish(None) {
        Some(report) if !report.failed() => 0,
        _ => 1,
    }
}

fn forwarded(name: &HeaderName, connection: &[String]) -> bool {
    let name = name.as_str();
    !HOP_BY_HOP.contains(&name) && !connection.iter().any(|c| c == name)
}

/// The header names a `Connection` header lists: hop-by-hop too.
fn connection_listed(headers: &HeaderMap) -> Vec<String> {
    headers
        .get_all("connection")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|n| n.trim().to_ascii_lowercase())
        .collect()
}

/// The request's headers as recorded: lower-cased names, secrets redacted.
fn recorded(headers: &HeaderMap) -> Vec<(String, String)> {
    headers
        .iter()
        .map(|(name, value)| {
            let name = name.as_str().to_owned();
            let value = if SECRET.contains(&name.as_str()) {
                "<redacted>".to_owned()
            } else {
                String::from_utf8_lossy(value.as_bytes()).into_owned()
            };
            (name, value)
        })
        .collect()
}

/// The proxy's own answer (the upstream's never came): recorded as the exchange's status.
fn own_answer(tap: &Tap, key: u64, status: StatusCode, text: String) -> Response {
    tap.offer(Feed::Response {
        key,
        status: status.as_u16(),
        content_type: "text/plain".to_owned(),
        headers: Vec::new(),
    });
    tap.offer(Feed::ResponseEnd { key, at: tap.at() });
    eprintln!("mcp-conformance observe: {text}");
    (status, text).into_response()
}

async fn forward(State(proxy): State<Arc<Proxy>>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let at = proxy.tap.at();
    let key = proxy.next.fetch_add(1, Ordering::Relaxed);
    let body = match tokio::time::timeout(BODY_WAIT, axum::body::to_bytes(body, MAX_BODY)).await {
        Ok(Ok(body)) => body,
        Ok(Err(_)) => return (StatusCode::PAYLOAD_TOO_LARGE, format!("mcp-conformance observe: a request body over {MAX_BODY} bytes, or a broken one, is not forwarded")).into_response(),
        Err(_) => return (StatusCode::REQUEST_TIMEOUT, "mcp-conformance observe: the request body took too long").into_response(),
    };
    let path = parts
        .uri
        .path_and_query()
        .map_or_else(|| parts.uri.path().to_owned(), |p| p.as_str().to_owned());
    let exchange = Exchange {
        method: parts.method.to_string(),
        path,
        headers: recorded(&parts.headers),
        status: 0,
        content_type: String::new(),
        response_headers: Vec::new(),
    };
    proxy.tap.offer(Feed::Request {
        key,
        at,
        exchange,
        body: body.clone(),
    });
    let mut url = proxy.upstream.clone();
    url.set_query(parts.uri.query());
    let connection = connection_listed(&parts.headers);
    let mut upstream = proxy.client.request(parts.method, url);
    for (name, value) in &parts.headers {
        if forwarded(name, &connection) && name != "content-length" {
            upstream = upstream.header(name, value);
        }
    }
    let sent = tokio::time::timeout(HEAD_WAIT, upstream.body(body).send()).await;
    let reply = match sent {
        Ok(Ok(reply)) => reply,
        Ok(Err(e)) => {
            let text = format!("the upstream {} could not be reached: {e}", proxy.upstream);
            return own_answer(&proxy.tap, key, StatusCode::BAD_GATEWAY, text);
        }
        Err(_) => {
            let text = format!(
                "the upstream did not answer within {}s",
                HEAD_WAIT.as_secs()
            );
            return own_answer(&proxy.tap, key, StatusCode::GATEWAY_TIMEOUT, text);
        }
    };
    respond(&proxy.tap, key, reply)
}

/// The upstream's response, streamed back; each chunk is offered to the judge as it passes.
fn respond(tap: &Tap, key: u64, reply: reqwest::Response) -> Response {
    let status = reply.status();
    let content_type = reply
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let mcp_headers = reply
        .headers()
        .iter()
        .filter(|(name, _)| name.as_str().starts_with("mcp-"))
        .map(|(name, value)| {
            let value = String::from_utf8_lossy(value.as_bytes()).into_owned();
            (name.as_str().to_owned(), value)
        })
        .collect();
    tap.offer(Feed::Response {
        key,
        status: status.as_u16(),
        content_type,
        headers: mcp_headers,
    });
    let connection = connection_listed(reply.headers());
    let mut response = Response::builder().status(status);
    for (name, value) in reply.headers() {
        if forwarded(name, &connection) {
            response = response.header(name, value);
        }
    }
    let end = EndOfBody {
        tap: tap.clone(),
        key,
    };
    let stream = reply.bytes_stream().map(move |chunk| {
        if let Ok(chunk) = &chunk {
            end.tap.offer(Feed::ResponseChunk {
                key: end.key,
                at: end.tap.at(),
                chunk: chunk.clone(),
            });
        }
        chunk
    });
    response
        .body(Body::from_stream(stream))
        .unwrap_or_else(|e| {
            (
                StatusCode::BAD_GATEWAY,
                format!("mcp-conformance observe: {e}"),
            )
                .into_response()
        })
}

/// Tells the judge a response body ended, however it ended (read to its end, or the client
/// went away): dropped with the body's stream.
struct EndOfBody {
    tap: Tap,
    key: u64,
}

impl Drop for EndOfBody {
    fn drop(&mut self) {
        self.tap.offer(Feed::ResponseEnd {
            key: self.key,
            at: self.tap.at(),
        });
    }
}
