//! The state every client handle and both tasks share: the lifecycle phase and its
//! transitions, what the connection learned, the write queue, the pending map, and the signals
//! that end the connection. Sending a request and waiting for its reply ([`Shared::call`]) is
//! here too.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use mcp_protocol::mcp::methods;
use mcp_protocol::{Message, Notification, Outgoing, Request};
use parking_lot::Mutex;
use serde_json::{json, Value};
use tokio::sync::{broadcast, mpsc, watch, Semaphore};
use tokio_util::sync::CancellationToken;

use super::pending::Pending;
use crate::era::Connected;
use crate::error::{ClientError, CloseCause, ClosedReason};
use crate::options::{ClientOptions, FrameDirection};
use crate::process::Process;
use crate::state::Phase;

/// The connection, as every [`Client`](super::Client) handle and both tasks see it.
pub(super) struct Shared {
    pub(super) options: ClientOptions,
    pub(super) phase: Mutex<Phase>,
    /// What the handshake or the probe established; `Legacy` from the `initialize` result on.
    pub(super) connected: Mutex<Option<Connected>>,
    pub(super) pending: Pending,
    pub(super) out: mpsc::Sender<Outgoing>,
    /// Cancelled to close the server's stdin after what is queued is written.
    pub(super) stop_writer: CancellationToken,
    /// Cancelled when the reader has finished and every pending caller was failed.
    pub(super) reader_done: CancellationToken,
    /// Cancelled when the writer has written what was queued and closed the output.
    pub(super) writer_done: CancellationToken,
    pub(super) close_requested: AtomicBool,
    /// Why the writer stopped, if it failed: the cause callers see until the reader finishes.
    pub(super) write_error: Mutex<Option<String>>,
    pub(super) notifications: broadcast::Sender<Notification>,
    pub(super) closed: watch::Sender<Option<ClosedReason>>,
    pub(super) process: Option<Arc<Process>>,
    /// Room for server requests being answered (`elicitation/create`): at most
    /// [`Shared::SERVER_REQUESTS`] at once; more are refused.
    pub(super) server_requests: Arc<Semaphore>,
}

impl Shared {
    /// How many server requests may be answered at once.
    pub(super) const SERVER_REQUESTS: usize = 16;

    pub(super) fn phase(&self) -> Phase {
        *self.phase.lock()
    }

    pub(super) fn set_phase_unless_closed(&self, next: Phase) {
        let mut phase = self.phase.lock();
        if *phase != Phase::Closed {
            *phase = next;
        }
    }

    /// Moves from `from` to `next`; false (and no change) if the phase is not `from` (closed
    /// meanwhile).
    pub(super) fn set_phase_if(&self, from: Phase, next: Phase) -> bool {
        let mut phase = self.phase.lock();
        if *phase == from {
            *phase = next;
            true
        } else {
            false
        }
    }

    /// Starts a handshake step: `new` → `next`, refused in any other phase.
    pub(super) fn claim(
        &self,
        next: Phase,
        operation: &str,
        hint: &'static str,
    ) -> Result<(), ClientError> {
        let mut phase = self.phase.lock();
        match *phase {
            Phase::New => {
                *phase = next;
                Ok(())
            }
            Phase::Probing | Phase::Initializing => Err(ClientError::InitializeInProgress),
            other => Err(self.refusal(operation, other, hint)),
        }
    }

    pub(super) fn refusal(&self, operation: &str, phase: Phase, hint: &'static str) -> ClientError {
        if phase == Phase::Closed {
            return self.closed_error();
        }
        ClientError::InvalidState {
            operation: operation.to_owned(),
            state: phase.public(),
            hint,
        }
    }

    pub(super) fn require_ready(&self, method: &str) -> Result<(), ClientError> {
        match self.phase() {
            Phase::Ready => Ok(()),
            phase => Err(self.refusal(method, phase, "call connect() first")),
        }
    }

    pub(super) fn closed_error(&self) -> ClientError {
        if let Some(reason) = self.closed.borrow().clone() {
            return ClientError::Closed(reason);
        }
        let cause = match self.write_error.lock().clone() {
            Some(e) => CloseCause::WriteFailed(e),
            None => CloseCause::ClientClosed,
        };
        ClientError::Closed(ClosedReason {
            cause,
            status: self.process.as_ref().and_then(|p| p.exit_status()),
            stderr_tail: self
                .process
                .as_ref()
                .map(|p| p.stderr_tail())
                .unwrap_or_default(),
        })
    }

    pub(super) async fn send(&self, frame: Outgoing) -> Result<(), ClientError> {
        if self.closed.borrow().is_some() {
            return Err(self.closed_error());
        }
        self.out.send(frame).await.map_err(|_| self.closed_error())
    }

    pub(super) async fn notify_raw(
        &self,
        method: &str,
        params: Option<Value>,
    ) -> Result<(), ClientError> {
        let n = Notification {
            method: method.to_owned(),
            params,
        };
        self.send(Message::Notification(n).into()).await
    }

    /// Sends a request and waits for its reply, bounded by `timeout`.
    pub(super) async fn call(
        &self,
        method: &str,
        params: Option<Value>,
        timeout: Duration,
        cancel_on_timeout: bool,
    ) -> Result<Value, ClientError> {
        let (id, rx) = self.pending.open();
        // Removes the entry however this call ends (reply, timeout, or the caller giving up).
        let _entry = self.pending.remove_on_drop(&id);
        let request = Request {
            id: id.clone(),
            method: method.to_owned(),
            params,
        };
        // The timeout bounds the whole call: queueing the request too, since a server that
        // stops reading its stdin fills the write queue.
        let deadline = tokio::time::Instant::now() + timeout;
        let timed_out = || ClientError::Timeout {
            method: method.to_owned(),
            id: id.clone(),
            after: timeout,
        };
        match tokio::time::timeout_at(deadline, self.send(Message::Request(request).into())).await {
            Ok(sent) => sent?,
            // Never queued, so there is nothing to cancel.
            Err(_) => return Err(timed_out()),
        }
        match tokio::time::timeout_at(deadline, rx).await {
            Ok(Ok(Err(transport))) => Err(transport),
            Ok(Ok(Ok(response))) => response.outcome.map_err(|error| ClientError::Server {
                method: method.to_owned(),
                error,
            }),
            Ok(Err(_)) => Err(self.closed_error()),
            Err(_) => {
                if cancel_on_timeout {
                    let params = json!({
                        "requestId": id,
                        "reason": format!("timed out after {timeout:?}"),
                    });
                    // Best effort: waiting for room in a full write queue would make the
                    // timeout itself hang.
                    let n = Notification {
                        method: methods::CANCELLED.to_owned(),
                        params: Some(params),
                    };
                    if self.out.try_send(Message::Notification(n).into()).is_err() {
                        tracing::debug!(%id, "write queue full or closed: cancellation not sent");
                    }
                }
                Err(timed_out())
            }
        }
    }

    /// Hands a frame to [`ClientOptions::frame_hook`] and the `mcp::frames` trace, when either
    /// listens.
    pub(super) fn hook(&self, direction: FrameDirection, frame: &impl serde::Serialize) {
        let traced = tracing::enabled!(target: "mcp::frames", tracing::Level::DEBUG);
        if self.options.frame_hook.is_none() && !traced {
            return;
        }
        let json = serde_json::to_string(frame).unwrap_or_default();
        if traced {
            tracing::debug!(target: "mcp::frames", "{direction} {json}");
        }
        if let Some(hook) = &self.options.frame_hook {
            hook(direction, &json);
        }
    }
}
