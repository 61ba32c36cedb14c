//! Reading a POST body within its bounds, and parsing it where it cannot stall other
//! clients.
//!
//! A body is read only up to its cap (`--max-message-bytes`, or the smaller
//! `--max-initialize-bytes` for a POST that can only be an `initialize`), within the body
//! timeout, and only while all bodies being received fit the global body budget
//! (`--body-budget`): a declared `Content-Length` is taken from the budget before a byte is
//! read, a chunked body as it arrives. What a refused body gets is decided in one place,
//! [`BodyError::into_response`].

use std::sync::Arc;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::Response;
use http_body_util::BodyExt;
use mcp_protocol::{ErrorCode, ErrorObject, FrameError, Incoming};
use tokio::sync::Semaphore;

use super::budget::{Budget, Held};
use super::origin::text;
use super::reply::rpc_error;
use crate::params::ServerParams;

/// Bodies larger than this are parsed on tokio's blocking pool rather than on the thread
/// that serves other connections: parsing 16 MiB takes tens of milliseconds to seconds
/// (deeply structured input), and must not hold everyone else's requests meanwhile. Smaller
/// bodies parse in well under a millisecond, cheaper than the hop.
const PARSE_INLINE_MAX: usize = 256 * 1024;

/// Seconds a client refused for the budget is asked to wait (`Retry-After`).
const RETRY_AFTER_SECS: &str = "1";

/// A body's bounds.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    /// The most bytes this body may have.
    pub(crate) cap: usize,
    /// How long it may take to arrive.
    pub(crate) timeout: Duration,
}

/// Why a body was not read whole.
#[derive(Debug)]
pub(crate) enum BodyError {
    /// Larger than its cap (413), declared or seen.
    TooLarge { declared: Option<u64>, max: usize },
    /// Bodies being received already take the whole budget (503).
    Busy { budget: usize },
    /// It did not arrive within the timeout (408).
    Timeout(Duration),
    /// The connection failed while it arrived (400).
    Read(String),
}

impl BodyError {
    /// The response a refused body gets: the only mapping from these to statuses and codes.
    pub(crate) fn into_response(self) -> Response {
        match self {
            BodyError::TooLarge { declared, max } => rpc_error(
                StatusCode::PAYLOAD_TOO_LARGE,
                None,
                FrameError::TooLarge { declared, max }.to_error_object(),
            ),
            BodyError::Busy { budget } => {
                let mut response = rpc_error(
                    StatusCode::SERVICE_UNAVAILABLE,
                    None,
                    ErrorObject::new(
                        ErrorCode(-32000),
                        format!("Server busy: request bodies being received take its budget of {budget} bytes; retry shortly"),
                    )
                    .with_data(serde_json::json!({ "bodyBudgetBytes": budget })),
                );
                response.headers_mut().insert(
                    header::RETRY_AFTER,
                    HeaderValue::from_static(RETRY_AFTER_SECS),
                );
                response
            }
            BodyError::Timeout(timeout) => rpc_error(
                StatusCode::REQUEST_TIMEOUT,
                None,
                ErrorObject::new(
                    ErrorCode::PARSE_ERROR,
                    format!(
                        "Parse error: the request body did not arrive within {} s",
                        timeout.as_secs_f64()
                    ),
                ),
            ),
            BodyError::Read(e) => rpc_error(
                StatusCode::BAD_REQUEST,
                None,
                ErrorObject::new(
                    ErrorCode::PARSE_ERROR,
                    format!("Parse error: the request body could not be read: {e}"),
                ),
            ),
        }
    }
}

/// Reads the body within `limits` and the budget: its bytes, and what they hold of the
/// budget (keep it until the bytes are dropped). A declared `Content-Length` over the cap
/// or the budget is refused before a byte is read.
pub(crate) async fn read(
    body: Body,
    headers: &HeaderMap,
    limits: Limits,
    budget: &Arc<Budget>,
) -> Result<(Bytes, Option<Held>), BodyError> {
    let declared =
        text(headers, header::CONTENT_LENGTH.as_str()).and_then(|v| v.parse::<u64>().ok());
    let max = limits.cap;
    if declared.is_some_and(|n| n > max as u64) {
        return Err(BodyError::TooLarge { declared, max });
    }
    // Within the cap, so it fits a usize.
    let expected = declared.map_or(0, |n| n as usize);
    let mut held = None;
    count(&mut held, expected, budget)?;
    match tokio::time::timeout(limits.timeout, collect(body, expected, max, held, budget)).await {
        Ok(read) => read,
        Err(_) => Err(BodyError::Timeout(limits.timeout)),
    }
}

/// Bodies up to this size are not counted against the budget: a full budget must not stop
/// other clients' ordinary requests, and what such bodies can take is bounded by the
/// connection cap (1 024 × 64 KiB = 64 MiB by default). Small bodies cost no atomic
/// operation either.
const UNCOUNTED: usize = 64 * 1024;

/// Counts a body that has reached `len` bytes (declared or received) against the budget.
fn count(held: &mut Option<Held>, len: usize, budget: &Arc<Budget>) -> Result<(), BodyError> {
    if len <= UNCOUNTED {
        return Ok(());
    }
    let taken = match held {
        Some(held) => len <= held.bytes() || held.grow(len - held.bytes()),
        None => budget.take(len).map(|taken| *held = Some(taken)).is_some(),
    };
    if taken {
        Ok(())
    } else {
        Err(BodyError::Busy {
            budget: budget.max(),
        })
    }
}

/// The body's frames into one buffer, counting against the budget whatever arrives beyond
/// what was declared (a chunked body, or a wrong `Content-Length`, which hyper refuses).
async fn collect(
    mut body: Body,
    expected: usize,
    max: usize,
    mut held: Option<Held>,
    budget: &Arc<Budget>,
) -> Result<(Bytes, Option<Held>), BodyError> {
    let mut joined = Joined::Empty;
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|e| BodyError::Read(e.to_string()))?;
        let Ok(data) = frame.into_data() else {
            continue; // trailers: nothing to keep
        };
        let len = joined.len() + data.len();
        if len > max {
            return Err(BodyError::TooLarge {
                declared: None,
                max,
            });
        }
        count(&mut held, len, budget)?;
        joined = joined.push(data, expected);
    }
    Ok((joined.into_bytes(), held))
}

/// A body's frames so far: a body that came in one frame is kept as it is (no copy, as
/// most small bodies come); more frames are joined into one buffer.
enum Joined {
    Empty,
    One(Bytes),
    Many(Vec<u8>),
}

impl Joined {
    fn len(&self) -> usize {
        match self {
            Joined::Empty => 0,
            Joined::One(bytes) => bytes.len(),
            Joined::Many(buffer) => buffer.len(),
        }
    }

    fn push(self, data: Bytes, expected: usize) -> Joined {
        match self {
            Joined::Empty => Joined::One(data),
            Joined::One(first) => {
                let mut buffer = Vec::with_capacity(expected.max(first.len() + data.len()));
                buffer.extend_from_slice(&first);
                buffer.extend_from_slice(&data);
                Joined::Many(buffer)
            }
            Joined::Many(mut buffer) => {
                buffer.extend_from_slice(&data);
                Joined::Many(buffer)
            }
        }
    }

    fn into_bytes(self) -> Bytes {
        match self {
            Joined::Empty => Bytes::new(),
            Joined::One(bytes) => bytes,
            Joined::Many(buffer) => Bytes::from(buffer),
        }
    }
}

/// Parses a body with the core's rules ([`crate::core::parse`]); a large one on the
/// blocking pool, so that other connections are served meanwhile.
///
/// Large parses run one at a time (`one_at_a_time`): a parsed message can take 16 times its
/// bytes (`[0,0,…]` in params is one 32-byte value per 2 bytes), so bodies the budget lets
/// in together must not all expand together.
pub(crate) async fn parse(
    bytes: &Bytes,
    one_at_a_time: &Semaphore,
) -> Result<Incoming<ServerParams>, FrameError> {
    if bytes.len() <= PARSE_INLINE_MAX {
        return crate::core::parse(bytes);
    }
    let Ok(_turn) = one_at_a_time.acquire().await else {
        return Err(FrameError::Parse(
            "the body could not be parsed: the server is shutting down".to_owned(),
        ));
    };
    let bytes = bytes.clone();
    match tokio::task::spawn_blocking(move || crate::core::parse(&bytes)).await {
        Ok(parsed) => parsed,
        // The parse panicked (it does not) or the runtime is shutting down.
        Err(e) => Err(FrameError::Parse(format!(
            "the body could not be parsed: {e}"
        ))),
    }
}
