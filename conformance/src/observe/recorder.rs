//! The judging side: turns what the forwarding side hands over ([`Feed`]) into a [`Timeline`]
//! of messages and events, appends each to the transcript file, and has the report rewritten
//! as evidence comes. It runs on a thread of its own, so nothing it does (parsing, judging,
//! writing files) can slow the forwarding.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::sync::mpsc::RecvTimeoutError;
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use mcp_protocol::codec::RawFrame;
use mcp_protocol::http::{SseEvent, SseReader};
use mcp_protocol::{Framing, FramingMode, StdioCodec};
use serde_json::{json, Value};

use super::feed::{Drain, Feed};
use crate::clients::judge;
use crate::clients::timeline::{Event, Message, Side, Timeline, What, Wire};
use crate::transcript::Direction;

/// The most events a timeline keeps; later messages are not judged (the report says so).
pub(crate) const MAX_EVENTS: usize = 100_000;
/// The most message bytes a timeline keeps.
const MAX_BYTES: usize = 256 * 1024 * 1024;
/// The largest message (a stdio frame, an HTTP body, an SSE event) judged.
const MAX_MESSAGE: usize = 16 * 1024 * 1024;
/// The report is rewritten at most this often.
pub(crate) const REWRITE_EVERY: Duration = Duration::from_millis(250);

/// What the judge has built so far.
#[derive(Debug)]
pub(crate) struct Recorder {
    pub(crate) timeline: Timeline,
    /// stdio: the client's and the server's byte streams, each split into frames.
    client: Framer,
    server: Framer,
    /// HTTP: the responses being read, by the proxy's key.
    pending: HashMap<u64, Pending>,
    transcript: Option<BufWriter<File>>,
    bytes: usize,
    /// Why some of the session is not in the timeline.
    pub(crate) truncated: Option<String>,
}

#[derive(Debug)]
struct Framer {
    codec: StdioCodec,
    buf: BytesMut,
}

impl Framer {
    fn new() -> Framer {
        Framer {
            codec: StdioCodec::new(FramingMode::Auto)
                .strict()
                .with_max_message_bytes(MAX_MESSAGE),
            buf: BytesMut::new(),
        }
    }

    /// The frames the bytes so far complete (all that is left, at the end).
    fn frames(&mut self, end: bool) -> Vec<RawFrame> {
        let mut out = Vec::new();
        loop {
            let next = if end {
                self.codec.decode_raw_eof(&mut self.buf)
            } else {
                self.codec.decode_raw(&mut self.buf)
            };
            match next {
                Ok(Some(frame)) => out.push(frame),
                Ok(None) | Err(_) => return out,
            }
        }
    }
}

/// An HTTP response whose body is being read.
#[derive(Debug)]
struct Pending {
    /// The index of its [`What::Http`] event.
    event: usize,
    body: Body,
}

#[derive(Debug)]
enum Body {
    /// `application/json` (or anything else): the whole body is one message.
    Whole(Vec<u8>),
    /// `text/event-stream`: each event's data is one message.
    Events(Box<SseReader>),
    /// Over the bound: not judged.
    Dropped,
    /// Not a JSON or event-stream body (a 202's empty one, a 404's text): not a message.
    Ignored,
}

impl Recorder {
    pub(crate) fn new(wire: Wire, transcript: Option<&Path>) -> std::io::Result<Recorder> {
        let transcript = match transcript {
            Some(path) => Some(BufWriter::new(
                File::options().create(true).append(true).open(path)?,
            )),
            None => None,
        };
        Ok(Recorder {
            timeline: Timeline::new(wire),
            client: Framer::new(),
            server: Framer::new(),
            pending: HashMap::new(),
            transcript,
            bytes: 0,
            truncated: None,
        })
    }

    /// The framing the client's bytes came in (stdio), once seen.
    pub(crate) fn framing(&self) -> Option<Framing> {
        self.client.codec.framing()
    }

    /// Takes feeds until [`Feed::Done`], calling `write` after new evidence at most every
    /// [`REWRITE_EVERY`] (longer if writing takes long: the judge must keep up first).
    pub(crate) fn run(&mut self, drain: &Drain, mut write: impl FnMut(&Recorder, bool)) {
        let mut dirty = false;
        let mut next_write = Instant::now();
        loop {
            let wait = if dirty {
                next_write.saturating_duration_since(Instant::now())
            } else {
                Duration::from_secs(3600)
            };
            match drain.rx.recv_timeout(wait) {
                Ok(Feed::Done) | Err(RecvTimeoutError::Disconnected) => break,
                Ok(feed) => {
                    self.take(feed);
                    dirty = true;
                }
                Err(RecvTimeoutError::Timeout) => {}
            }
            if dirty && Instant::now() >= next_write {
                let started = Instant::now();
                write(self, drain.stopped());
                dirty = false;
                next_write = Instant::now() + REWRITE_EVERY.max(started.elapsed() * 4);
            }
        }
        self.finish();
    }

    fn take(&mut self, feed: Feed) {
        match feed {
            Feed::Bytes { from, at, chunk } => self.bytes_from(from, at, &chunk),
            Feed::Event { at, what } => {
                self.push(at, what);
            }
            Feed::Request {
                key,
                at,
                exchange,
                body,
            } => {
                let event = self.push(at, What::Http(exchange));
                if let Some(event) = event {
                    if !body.is_empty() {
                        self.message(Side::Client, at, body, Some(event));
                    }
                    self.pending.insert(
                        key,
                        Pending {
                            event,
                            body: Body::Ignored,
                        },
                    );
                }
            }
            Feed::Response {
                key,
                status,
                content_type,
                headers,
            } => self.response(key, status, content_type, headers),
            Feed::ResponseChunk { key, at, chunk } => self.response_chunk(key, at, &chunk),
            Feed::ResponseEnd { key, at } => self.response_end(key, at),
            Feed::Done => {}
        }
    }

    /// Whatever is left in the stdio buffers: an unterminated last frame is still judged.
    fn finish(&mut self) {
        for side in [Side::Client, Side::Server] {
            let frames = self.framer(side).frames(true);
            let at = self.timeline.events.last().map_or(Duration::ZERO, |e| e.at);
            for frame in frames {
                self.frame(side, at, frame);
            }
        }
        if let Some(t) = &mut self.transcript {
            let _ = t.flush();
        }
    }

    fn framer(&mut self, side: Side) -> &mut Framer {
        match side {
            Side::Client => &mut self.client,
            Side::Server => &mut self.server,
        }
    }

    fn bytes_from(&mut self, from: Side, at: Duration, chunk: &[u8]) {
        let framer = self.framer(from);
        framer.buf.extend_from_slice(chunk);
        for frame in framer.frames(false) {
            self.frame(from, at, frame);
        }
    }

    fn frame(&mut self, from: Side, at: Duration, frame: RawFrame) {
        match frame {
            Ok(raw) => self.message(from, at, raw, None),
            Err(e) => {
                let raw = format!("<{e}>").into_bytes();
                self.push(at, What::Garbage { from, raw });
            }
        }
    }

    /// One message's bytes: a [`What::Message`] if they are JSON, else [`What::Garbage`].
    fn message(&mut self, from: Side, at: Duration, raw: Bytes, exchange: Option<usize>) {
        let what = match serde_json::from_slice::<Value>(&raw) {
            Ok(json) => What::Message(Message {
                from,
                raw: raw.to_vec(),
                json: Some(json),
                exchange,
            }),
            Err(_) => What::Garbage {
                from,
                raw: raw.to_vec(),
            },
        };
        self.push(at, what);
    }

    /// Adds an event (a message only within the bounds), and appends it to the transcript file.
    fn push(&mut self, at: Duration, what: What) -> Option<usize> {
        let size = match &what {
            What::Message(m) => m.raw.len(),
            What::Garbage { raw, .. } => raw.len(),
            _ => 0,
        };
        let bounded = size > 0 || matches!(what, What::Http(_));
        if bounded && (self.timeline.events.len() >= MAX_EVENTS || self.bytes + size > MAX_BYTES) {
            self.truncated.get_or_insert_with(|| {
                format!(
                    "the timeline was cut at {} events ({} bytes of messages): later messages were forwarded but not judged",
                    self.timeline.events.len(),
                    self.bytes
                )
            });
            return None;
        }
        self.bytes += size;
        let event = Event { at, what };
        self.append(&event);
        self.timeline.events.push(event);
        Some(self.timeline.events.len() - 1)
    }

    /// One line of the `--transcript` file, flushed at once.
    fn append(&mut self, event: &Event) {
        let Some(file) = &mut self.transcript else {
            return;
        };
        let entry = judge::entry(event);
        let from = match entry.direction {
            Direction::Receive => "client",
            Direction::Send => "server",
            Direction::Event => "event",
        };
        let ms = (entry.at_ms * 1000.0).round() / 1000.0;
        let line = json!({"ms": ms, "from": from, "text": entry.text});
        let written = serde_json::to_writer(&mut *file, &line)
            .map_err(std::io::Error::from)
            .and_then(|()| file.write_all(b"\n"))
            .and_then(|()| file.flush());
        if let Err(e) = written {
            eprintln!("mcp-conformance observe: cannot append to the transcript file ({e}); no more is written to it");
            self.transcript = None;
        }
    }

    fn response(
        &mut self,
        key: u64,
        status: u16,
        content_type: String,
        headers: Vec<(String, String)>,
    ) {
        let Some(pending) = self.pending.get_mut(&key) else {
            return;
        };
        let media = content_type.to_ascii_lowercase();
        pending.body = if media.starts_with(mcp_protocol::http::EVENT_STREAM) {
            Body::Events(Box::new(SseReader::new(MAX_MESSAGE)))
        } else if media.starts_with(mcp_protocol::http::JSON) {
            Body::Whole(Vec::new())
        } else {
            Body::Ignored
        };
        if let Some(Event {
            what: What::Http(x),
            ..
        }) = self.timeline.events.get_mut(pending.event)
        {
            x.status = status;
            x.content_type = content_type;
            x.response_headers = headers;
        }
    }

    fn response_chunk(&mut self, key: u64, at: Duration, chunk: &[u8]) {
        let Some(pending) = self.pending.get_mut(&key) else {
            return;
        };
        let event = pending.event;
        let mut events: Vec<SseEvent> = Vec::new();
        match &mut pending.body {
            Body::Whole(body) if body.len() + chunk.len() <= MAX_MESSAGE => {
                body.extend_from_slice(chunk)
            }
            Body::Whole(_) => pending.body = Body::Dropped,
            Body::Events(reader) => {
                if reader.feed(chunk, &mut events).is_err() {
                    pending.body = Body::Dropped;
                }
            }
            Body::Dropped | Body::Ignored => {}
        }
        for e in events {
            self.message(Side::Server, at, Bytes::from(e.data), Some(event));
        }
    }

    fn response_end(&mut self, key: u64, at: Duration) {
        let Some(pending) = self.pending.remove(&key) else {
            return;
        };
        match pending.body {
            Body::Whole(body) if !body.iter().all(u8::is_ascii_whitespace) => {
                self.message(Side::Server, at, Bytes::from(body), Some(pending.event));
            }
            Body::Dropped => {
                let raw = format!("<a response body over {MAX_MESSAGE} bytes, not judged>");
                self.push(
                    at,
                    What::Garbage {
                        from: Side::Server,
                        raw: raw.into_bytes(),
                    },
                );
            }
            Body::Whole(_) | Body::Events(_) | Body::Ignored => {}
        }
    }
}

impl Recorder {
    /// A lifecycle event that came after judging stopped: added at the end.
    pub(crate) fn late(&mut self, at: Duration, what: What) {
        self.push(at, what);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn feed(r: &mut Recorder, from: Side, bytes: &[u8]) {
        r.take(Feed::Bytes {
            from,
            at: Duration::ZERO,
            chunk: Bytes::copy_from_slice(bytes),
        });
    }

    fn kinds(r: &Recorder) -> Vec<String> {
        r.timeline
            .events
            .iter()
            .map(|e| match &e.what {
                What::Message(m) => format!("{:?}:{}", m.from, String::from_utf8_lossy(&m.raw)),
                What::Garbage { from, raw } => {
                    format!("{from:?} garbage:{}", String::from_utf8_lossy(raw))
                }
                other => format!("{other:?}"),
            })
            .collect()
    }

    #[test]
    fn chunks_split_anywhere_become_the_same_messages() {
        let mut r = Recorder::new(Wire::Stdio, None).unwrap();
        feed(&mut r, Side::Client, b"{\"id\":1,");
        feed(
            &mut r,
            Side::Client,
            b"\"method\":\"ping\"}\r\nnot json\n{\"a\"",
        );
        feed(&mut r, Side::Server, b"Content-Length: 7\r\n\r\n{\"b\":1}");
        r.finish();
        assert_eq!(
            kinds(&r),
            [
                "Client:{\"id\":1,\"method\":\"ping\"}",
                "Client garbage:not json",
                "Server:{\"b\":1}",
                "Client garbage:{\"a\"",
            ]
        );
        assert_eq!(r.framing(), Some(Framing::Ndjson));
    }

    #[test]
    fn http_bodies_and_sse_events_are_messages_of_their_exchange() {
        let mut r = Recorder::new(Wire::Http, None).unwrap();
        let exchange = crate::clients::timeline::Exchange {
            method: "POST".into(),
            path: "/mcp".into(),
            headers: Vec::new(),
            status: 0,
            content_type: String::new(),
            response_headers: Vec::new(),
        };
        r.take(Feed::Request {
            key: 7,
            at: Duration::ZERO,
            exchange,
            body: Bytes::from_static(b"{\"id\":1,\"method\":\"ping\"}"),
        });
        r.take(Feed::Response {
            key: 7,
            status: 200,
            content_type: "text/event-stream".into(),
            headers: vec![("mcp-session-id".into(), "s1".into())],
        });
        for chunk in [
            &b"event: message\ndata: {\"id\""[..],
            b":1,\"result\":{}}\n\n",
        ] {
            r.take(Feed::ResponseChunk {
                key: 7,
                at: Duration::ZERO,
                chunk: Bytes::copy_from_slice(chunk),
            });
        }
        r.take(Feed::ResponseEnd {
            key: 7,
            at: Duration::ZERO,
        });
        let events = &r.timeline.events;
        assert_eq!(events.len(), 3);
        assert!(
            matches!(&events[0].what, What::Http(x) if x.status == 200 && x.content_type == "text/event-stream")
        );
        for e in &events[1..] {
            assert!(matches!(&e.what, What::Message(m) if m.exchange == Some(0)));
        }
    }
}
