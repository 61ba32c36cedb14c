//! The HTTP floor: the stdio floor's canned replies served over Streamable HTTP by a minimal
//! hyper server, as the reference for what TCP, HTTP/1.1 and the HTTP load driver cost. It
//! runs as a hidden subcommand of the bench's own binary (`mcp-bench serve-http-floor`),
//! which `mcp-bench --url URL --floor` starts for each run, as it starts any server.
//!
//! Each `POST` to the endpoint's path is read whole and answered with the stdio floor's reply
//! to the same bytes (`floor::answer`: the id and the text spliced into a canned result, no
//! JSON tree) in one `application/json` body; `initialize`'s reply also sets an
//! `Mcp-Session-Id`, as a stateful server does, so the bench sends the same headers as to
//! `mcp-echo-server --http`; a notification gets `202 Accepted` with no body (2025-11-25
//! transports, "Sending Messages to the Server"). `DELETE` (the end of a session) gets 200,
//! any other method 405, any other path 404. The session id is not checked: the floor keeps
//! no state. Like `mcp-echo-server --http` it serves every connection on one current-thread
//! tokio runtime, with `TCP_NODELAY`. It prints `listening on http://ADDR/PATH` on stderr once
//! bound and runs until it is killed.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::header::{HeaderValue, ALLOW, CONTENT_TYPE};
use http::{Method, Request, Response, StatusCode};
use http_body_util::{BodyExt, Full, LengthLimitError, Limited};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use mcp_protocol::http as mcp_http;
use tokio::net::TcpListener;

use super::{answer, busy, Answered, Reply};

/// The session id every `initialize` reply sets.
const SESSION: &str = "mcp-bench-floor";
/// The largest request body read: far above what the bench sends (a text of `--payload` bytes).
const MAX_BODY: usize = 256 << 20;
/// How long to wait after a failed `accept` (out of file descriptors, say) before the next.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(50);

/// How the floor answers.
#[derive(Debug)]
struct Floor {
    path: String,
    reply: Reply,
    /// Busy time spent on each request answered (`--floor-work`).
    work: Duration,
}

/// Serves on `addr` until killed; returns the exit code when it cannot start. `path` is the
/// endpoint's path (`/mcp`); `reply` and `work` are the stdio floor's.
pub fn serve(addr: SocketAddr, path: String, reply: Reply, work: Duration) -> u8 {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("mcp-bench serve-http-floor: cannot start a tokio runtime: {e}");
            return 1;
        }
    };
    let floor = Arc::new(Floor { path, reply, work });
    runtime.block_on(listen(addr, floor))
}

async fn listen(addr: SocketAddr, floor: Arc<Floor>) -> u8 {
    let listener = match TcpListener::bind(addr).await {
        Ok(listener) => listener,
        Err(e) => {
            eprintln!("mcp-bench serve-http-floor: cannot listen on {addr}: {e}");
            return 1;
        }
    };
    match listener.local_addr() {
        Ok(local) => eprintln!("listening on http://{local}{}", floor.path),
        Err(e) => {
            eprintln!("mcp-bench serve-http-floor: cannot read the address bound: {e}");
            return 1;
        }
    }
    loop {
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            Err(e) => {
                eprintln!("mcp-bench serve-http-floor: accept failed: {e}");
                tokio::time::sleep(ACCEPT_BACKOFF).await;
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        let floor = Arc::clone(&floor);
        tokio::spawn(async move {
            let service = service_fn(move |request| respond(Arc::clone(&floor), request));
            // A connection that ends badly (the bench closed it mid-request) ends only itself.
            let _ = http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

async fn respond(
    floor: Arc<Floor>,
    request: Request<Incoming>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    if request.uri().path() != floor.path {
        return Ok(empty(StatusCode::NOT_FOUND));
    }
    match *request.method() {
        Method::POST => {}
        Method::DELETE => return Ok(empty(StatusCode::OK)),
        _ => {
            let mut response = empty(StatusCode::METHOD_NOT_ALLOWED);
            response
                .headers_mut()
                .insert(ALLOW, HeaderValue::from_static("POST, DELETE"));
            return Ok(response);
        }
    }
    let body = match Limited::new(request.into_body(), MAX_BODY).collect().await {
        Ok(body) => body.to_bytes(),
        Err(e) if e.is::<LengthLimitError>() => return Ok(empty(StatusCode::PAYLOAD_TOO_LARGE)),
        Err(_) => return Ok(empty(StatusCode::BAD_REQUEST)),
    };
    Ok(reply_to(&floor, &body))
}

/// The answer to a POSTed `body`.
fn reply_to(floor: &Floor, body: &[u8]) -> Response<Full<Bytes>> {
    let mut out = Vec::with_capacity(body.len() * 2 + 128);
    let answered = answer(body, floor.reply, &mut out);
    if answered == Answered::Nothing {
        return empty(StatusCode::ACCEPTED);
    }
    busy(floor.work);
    let mut response = Response::new(Full::new(Bytes::from(out)));
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static(mcp_http::JSON));
    if answered == Answered::Initialize {
        headers.insert(mcp_http::SESSION_ID, HeaderValue::from_static(SESSION));
    }
    response
}

fn empty(status: StatusCode) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::new()));
    *response.status_mut() = status;
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    fn floor() -> Floor {
        Floor {
            path: "/mcp".to_owned(),
            reply: Reply::Plain,
            work: Duration::ZERO,
        }
    }

    fn body(response: Response<Full<Bytes>>) -> Vec<u8> {
        futures::executor::block_on(response.into_body().collect())
            .map(|b| b.to_bytes().to_vec())
            .unwrap_or_default()
    }

    #[test]
    fn initialize_sets_a_session_and_notifications_get_202() {
        let init = reply_to(
            &floor(),
            br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}"#,
        );
        assert_eq!(init.status(), StatusCode::OK);
        assert_eq!(init.headers()[mcp_http::SESSION_ID], SESSION);
        assert_eq!(init.headers()[CONTENT_TYPE], mcp_http::JSON);
        let note = reply_to(
            &floor(),
            br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        );
        assert_eq!(note.status(), StatusCode::ACCEPTED);
        assert!(note.headers().get(mcp_http::SESSION_ID).is_none());
        assert_eq!(body(note), b"");
    }

    #[test]
    fn a_call_gets_its_own_id_and_text_back() {
        let call = reply_to(
            &floor(),
            br#"{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"echo","arguments":{"text":"12.xx"}}}"#,
        );
        assert_eq!(call.status(), StatusCode::OK);
        assert!(call.headers().get(mcp_http::SESSION_ID).is_none());
        assert_eq!(
            body(call),
            br#"{"jsonrpc":"2.0","id":12,"result":{"content":[{"type":"text","text":"12.xx"}],"isError":false}}"#
        );
    }
}
