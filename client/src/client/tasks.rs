//! The connection's two tasks: the reader hands each frame to the dispatch (`inbound.rs`) and
//! ends the connection when the server goes away; the writer owns the server's stdin.

use std::sync::Arc;

use futures::{SinkExt, StreamExt};
use mcp_protocol::{Outgoing, StdioCodec};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::mpsc;
use tokio_util::codec::{FramedRead, FramedWrite};
use tokio_util::sync::CancellationToken;

use super::close::EXIT_DRAIN;
use super::shared::Shared;
use crate::error::CloseCause;
use crate::options::FrameDirection;

pub(super) async fn read_loop<R: AsyncRead + Unpin>(
    mut frames: FramedRead<R, StdioCodec>,
    shared: Arc<Shared>,
    stop: CancellationToken,
) {
    let cause = loop {
        let exited = async {
            match &shared.process {
                Some(p) => p.exited().await,
                None => std::future::pending().await,
            }
        };
        let next = tokio::select! {
            biased;
            () = stop.cancelled() => return,
            next = frames.next() => next,
            () = exited => {
                // Replies may still be in the pipe: take what arrives within a moment.
                let drain = async {
                    while let Some(Ok(frame)) = frames.next().await {
                        shared.on_frame(frame).await;
                    }
                };
                let _ = tokio::time::timeout(EXIT_DRAIN, drain).await;
                break CloseCause::ServerExited;
            }
        };
        match next {
            None => break CloseCause::ServerClosedOutput,
            Some(Err(e)) => break CloseCause::ReadFailed(e.to_string()),
            Some(Ok(frame)) => shared.on_frame(frame).await,
        }
    };
    shared.finish(cause).await;
}

pub(super) async fn write_loop<W: AsyncWrite + Unpin>(
    mut sink: FramedWrite<W, StdioCodec>,
    mut rx: mpsc::Receiver<Outgoing>,
    shared: Arc<Shared>,
    stop: CancellationToken,
) {
    loop {
        let frame = tokio::select! {
            biased;
            () = stop.cancelled() => return,
            frame = rx.recv() => frame,
            () = shared.stop_writer.cancelled() => None,
        };
        let Some(frame) = frame else { break };
        let mut written = write_frame(&mut sink, &shared, frame).await;
        while let (Ok(()), Ok(next)) = (&written, rx.try_recv()) {
            written = write_frame(&mut sink, &shared, next).await;
        }
        if let Err(e) = match written {
            Ok(()) => sink.flush().await,
            Err(e) => Err(e),
        } {
            // The server closed its stdin (or died); the reader will see the rest.
            tracing::debug!("writing to the server failed: {e}");
            *shared.write_error.lock() = Some(e.to_string());
            // A request that was not written will never be answered: end the connection so
            // every waiting caller hears why now, not at its timeout.
            shared.finish(CloseCause::WriteFailed(e.to_string())).await;
            break;
        }
    }
    // Closing the server's stdin is the first step of the spec's shutdown sequence.
    let _ = sink.close().await;
    shared.writer_done.cancel();
}

async fn write_frame<W: AsyncWrite + Unpin>(
    sink: &mut FramedWrite<W, StdioCodec>,
    shared: &Shared,
    frame: Outgoing,
) -> std::io::Result<()> {
    shared.hook(FrameDirection::Send, &frame);
    sink.feed(frame).await
}
