//! Replies waiting to be written: encoded as they are made, written in bursts whose size
//! [`super::pacing`] decides.

use std::io;

use bytes::{Buf, BytesMut};
use mcp_protocol::{Outgoing, StdioCodec};
use tokio_util::codec::Encoder;

use super::pacing::Pacing;

/// The output buffer's capacity, kept across writes: a 16 KiB echo's reply fits, and a burst
/// stops to write at [`super::pacing::HOLD_AT`] at the latest, so holding replies never grows it.
const OUTPUT_CAPACITY: usize = 64 * 1024;

/// The output buffer and its pacing.
pub(super) struct Replies {
    codec: StdioCodec,
    buf: BytesMut,
    pacing: Pacing,
    /// Bytes written since the buffer was last empty: one write, for the pacing.
    flushing: usize,
}

impl Replies {
    pub(super) fn new(codec: StdioCodec) -> Self {
        Replies {
            codec,
            buf: BytesMut::with_capacity(OUTPUT_CAPACITY),
            pacing: Pacing::new(),
            flushing: 0,
        }
    }

    pub(super) fn encode(&mut self, reply: Outgoing) -> io::Result<()> {
        self.codec.encode(reply, &mut self.buf)
    }

    /// Whether a burst should stop to write what is waiting.
    pub(super) fn due(&self) -> bool {
        self.buf.len() >= self.pacing.threshold()
    }

    /// Replies not yet written.
    pub(super) fn unwritten(&self) -> &[u8] {
        &self.buf
    }

    /// `n` bytes of [`unwritten`](Self::unwritten) were written. Once all are, the buffer is
    /// empty: taking the space back moves nothing, while a reserve in the middle of the next
    /// burst would move that burst's replies to the front.
    pub(super) fn wrote(&mut self, n: usize) {
        self.buf.advance(n);
        self.flushing += n;
        if self.buf.is_empty() {
            self.buf.reserve(OUTPUT_CAPACITY);
            self.pacing.wrote(std::mem::take(&mut self.flushing));
            tracing::trace!("flushed replies");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A burst stops to write at the pacing's threshold: 2 KiB while the client runs on its
    /// own CPU, `HOLD_AT` while it shares the server's.
    #[test]
    fn a_burst_stops_to_write_at_the_pacing_threshold() {
        use super::super::pacing::{HOLD_AT, WRITE_AT};
        use mcp_protocol::{FramingMode, Response};
        let reply =
            |id: i64| Outgoing::from(Response::success(id.into(), json!({"t": "x".repeat(200)})));
        for (pacing, at) in [(Pacing::new(), WRITE_AT), (Pacing::held(), HOLD_AT)] {
            let mut replies = Replies::new(StdioCodec::new(FramingMode::Ndjson));
            replies.pacing = pacing;
            let mut id = 0;
            while !replies.due() {
                id += 1;
                replies.encode(reply(id)).unwrap();
            }
            let one = replies.buf.len() / usize::try_from(id).unwrap();
            assert!(replies.buf.len() >= at, "{} < {at}", replies.buf.len());
            assert!(
                replies.buf.len() < at + one,
                "{} >= {at} + {one}",
                replies.buf.len()
            );
        }
    }
}
