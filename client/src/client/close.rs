//! Ending a connection: the spec's shutdown sequence (close stdin, SIGTERM, SIGKILL), the
//! report it gives, and failing every waiting caller with the reason once the connection ended.

use std::process::ExitStatus;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use nix::sys::signal::Signal;

use super::shared::Shared;
use crate::error::{CloseCause, ClosedReason};
use crate::state::Phase;

/// How long output still in the pipe is read after the server exits.
pub(super) const EXIT_DRAIN: Duration = Duration::from_millis(500);

/// Which step of [`Client::close`](crate::Client::close) ended the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CloseStep {
    /// It had exited before `close()` was called.
    AlreadyExited,
    /// It exited after its stdin was closed (the polite way, `lifecycle.mdx` "Shutdown").
    StdinClosed,
    /// It needed SIGTERM.
    Terminated,
    /// It needed SIGKILL.
    Killed,
    /// An in-memory connection: our output was closed; there is no process. Over HTTP: what
    /// was queued was posted and the session, if any, ended with `DELETE`.
    OutputClosed,
}

/// What [`Client::close`](crate::Client::close) did.
#[derive(Debug, Clone, PartialEq)]
pub struct CloseReport {
    pub step: CloseStep,
    pub status: Option<ExitStatus>,
    pub elapsed: Duration,
}

impl Shared {
    /// The connection ended (the reader finished, a write failed, or `close()` stopped
    /// waiting for the reader): record why and fail every waiting caller at once.
    pub(super) async fn finish(&self, cause: CloseCause) {
        let cause = if self.close_requested.load(Ordering::SeqCst) {
            CloseCause::ClientClosed
        } else {
            cause
        };
        let (status, stderr_tail) = match &self.process {
            Some(p) => {
                let status = p.wait_exit(EXIT_DRAIN).await;
                p.wait_stderr(EXIT_DRAIN).await;
                (status, p.stderr_tail())
            }
            None => (None, Vec::new()),
        };
        let reason = ClosedReason {
            cause,
            status,
            stderr_tail,
        };
        tracing::debug!("MCP connection closed: {reason}");
        *self.phase.lock() = Phase::Closed;
        self.closed.send_if_modified(|slot| {
            if slot.is_none() {
                *slot = Some(reason);
                true
            } else {
                false
            }
        });
        // Dropping the senders wakes every waiting caller with the reason just stored.
        self.pending.clear();
        self.stop_writer.cancel();
        self.reader_done.cancel();
    }

    pub(super) async fn shutdown(&self) -> CloseReport {
        let started = Instant::now();
        self.close_requested.store(true, Ordering::SeqCst);
        *self.phase.lock() = Phase::Closed;
        self.stop_writer.cancel();
        let grace = self.options.close_grace;
        let (step, status) = match &self.process {
            None => {
                // What was queued (a reply, a cancellation) is written and the output closed
                // before this returns, so dropping the client right after loses nothing.
                let _ = tokio::time::timeout(grace, self.writer_done.cancelled()).await;
                let _ = tokio::time::timeout(grace, self.reader_done.cancelled()).await;
                (CloseStep::OutputClosed, None)
            }
            Some(p) => {
                if let Some(status) = p.exit_status() {
                    (CloseStep::AlreadyExited, Some(status))
                } else if let Some(status) = p.wait_exit(grace).await {
                    (CloseStep::StdinClosed, Some(status))
                } else {
                    p.signal(Signal::SIGTERM);
                    if let Some(status) = p.wait_exit(grace).await {
                        (CloseStep::Terminated, Some(status))
                    } else {
                        p.signal(Signal::SIGKILL);
                        (CloseStep::Killed, p.wait_exit(Duration::from_secs(5)).await)
                    }
                }
            }
        };
        // Let the reader record the end, so waiting callers see "closed by the client".
        if self.process.is_some() {
            let _ = tokio::time::timeout(EXIT_DRAIN, self.reader_done.cancelled()).await;
        }
        if !self.reader_done.is_cancelled() {
            self.finish(CloseCause::ClientClosed).await;
        }
        let report = CloseReport {
            step,
            status,
            elapsed: started.elapsed(),
        };
        tracing::debug!(?report, "closed");
        report
    }
}
