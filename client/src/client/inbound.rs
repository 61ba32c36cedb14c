//! What the reader does with each frame from the server: a reply goes to its waiting caller,
//! a server request is answered (`ping`) or refused (-32601), a notification is broadcast.

use mcp_protocol::codec::DecodedFrame;
use mcp_protocol::mcp::methods;
use mcp_protocol::{ErrorCode, ErrorObject, Incoming, Message, Response};
use serde_json::json;

use super::shared::Shared;
use crate::options::FrameDirection;

impl Shared {
    pub(super) async fn on_frame(&self, frame: DecodedFrame) {
        match frame {
            Ok(Incoming::Single(message)) => self.on_message(message).await,
            Ok(Incoming::Batch(items)) => {
                for item in items {
                    match item {
                        Ok(message) => self.on_message(message).await,
                        Err(invalid) => {
                            tracing::warn!("server sent an invalid batch member: {invalid}")
                        }
                    }
                }
            }
            Err(e) => tracing::warn!("server sent a bad frame: {e}"),
        }
    }

    /// One message from the server, whichever transport read it.
    pub(super) async fn on_message(&self, message: Message) {
        self.hook(FrameDirection::Receive, &message);
        match message {
            Message::Response(response) => {
                let Some(id) = response.id.clone() else {
                    if let Err(e) = &response.outcome {
                        tracing::warn!("server sent an error for a message it could not read: {e}");
                    }
                    return;
                };
                let waiter = self.pending.take(&id);
                match waiter {
                    Some(tx) => {
                        let _ = tx.send(Ok(response));
                    }
                    None => tracing::warn!(%id, "dropped a reply with an unknown id"),
                }
            }
            Message::Request(request) => {
                // Servers may ping clients; this client offers no other server-to-client method.
                let reply = if request.method == methods::PING {
                    Response::success(request.id, json!({}))
                } else {
                    let error = ErrorObject::new(
                        ErrorCode::METHOD_NOT_FOUND,
                        format!(
                            "Method not found: {} (this client offers no server-to-client methods)",
                            request.method
                        ),
                    );
                    Response::error(Some(request.id), error)
                };
                // Waits for room rather than drop the reply; while a server that stops reading
                // its stdin blocks this, every call still ends at its own timeout.
                let _ = self.send(reply.into()).await;
            }
            Message::Notification(n) => {
                let _ = self.notifications.send(n);
            }
        }
    }
}
