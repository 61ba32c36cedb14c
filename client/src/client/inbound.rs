//! What the reader does with each frame from the server: a reply goes to its waiting caller,
//! a server request is answered (`ping`; `elicitation/create` by the configured handler, in a
//! task of its own) or refused (-32601), a notification is broadcast.

use mcp_protocol::codec::DecodedFrame;
use mcp_protocol::mcp::methods;
use mcp_protocol::{ErrorCode, ErrorObject, Incoming, Message, Request, Response};
use serde_json::json;

use super::shared::Shared;
use crate::elicitation;
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
            Message::Request(request) => self.on_request(request).await,
            Message::Notification(n) => {
                let _ = self.notifications.send(n);
            }
        }
    }

    /// A request from the server. Each is answered: `ping` at once, `elicitation/create` by
    /// the handler (in a task, at most [`Shared::SERVER_REQUESTS`] at a time), anything else
    /// with -32601 (this client offers no other method). Replies wait for room in the write
    /// queue rather than be dropped; while a server that stops reading its stdin blocks this,
    /// every call still ends at its own timeout.
    async fn on_request(&self, request: Request) {
        let handler = match request.method.as_str() {
            methods::PING => {
                let _ = self
                    .send(Response::success(request.id, json!({})).into())
                    .await;
                return;
            }
            elicitation::METHOD => self.options.elicitation.clone(),
            _ => None,
        };
        let Some(elicitation) = handler else {
            let error = ErrorObject::new(
                ErrorCode::METHOD_NOT_FOUND,
                format!(
                    "Method not found: {} (not offered by this client)",
                    request.method
                ),
            );
            let _ = self
                .send(Response::error(Some(request.id), error).into())
                .await;
            return;
        };
        let Ok(permit) = self.server_requests.clone().try_acquire_owned() else {
            let error = ErrorObject::new(
                ErrorCode::INTERNAL_ERROR,
                format!(
                    "too many server requests in progress (at most {})",
                    Shared::SERVER_REQUESTS
                ),
            );
            let _ = self
                .send(Response::error(Some(request.id), error).into())
                .await;
            return;
        };
        let out = self.out.clone();
        let mut closed = self.closed.subscribe();
        tokio::spawn(async move {
            let _permit = permit;
            let answer = tokio::select! {
                answer = elicitation.answer(request.params) => answer,
                _ = closed.wait_for(Option::is_some) => return,
            };
            let reply = match answer {
                Ok(result) => Response::success(request.id, result),
                Err(error) => Response::error(Some(request.id), error),
            };
            let _ = out.send(Message::Response(reply).into()).await;
        });
    }
}
