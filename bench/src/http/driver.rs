//! The HTTP load driver: each call a POST `tools/call` echo on the session, C of them in flight
//! (C connections from the pool), on one runtime thread; each reply verified with the stdio
//! driver's [`Verifier`], and its id required to be the request's. A failed request is counted
//! ([`ErrorCounts`]) and the run goes on; no answer within the timeout stops it.

use std::time::Duration;

use bytes::{BufMut, Bytes, BytesMut};
use futures::stream::{self, StreamExt};
use tokio::runtime::Runtime;

use super::session::{Failure, Session};
use crate::error::{verify, DriveError};
use crate::text::Filler;
use crate::verify::{Received, Verifier};
use crate::{procfs, Calls, ErrorCounts};

/// The calls of one run on one session.
pub struct HttpCalls<'a> {
    pub rt: &'a Runtime,
    pub session: &'a Session,
    pub verifier: Verifier,
    pub filler: Filler,
    /// The last id sent; ids are unique within a run.
    pub next: u64,
    pub errors: ErrorCounts,
    pub wait: Duration,
}

impl HttpCalls<'_> {
    fn ids(&mut self, n: usize) -> std::ops::RangeInclusive<u64> {
        let first = self.next + 1;
        self.next += n as u64;
        first..=self.next
    }
}

/// Request `id`'s body: a `tools/call` of `echo` with id `id`'s text (`filler` grown to
/// `payload`).
fn body(filler: &Filler, id: u64, payload: usize) -> Bytes {
    let text = filler.text(id, payload).unwrap_or_default();
    let mut out = BytesMut::with_capacity(text.len() + 128);
    out.put_slice(
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"echo","arguments":{{"text":""#
        )
        .as_bytes(),
    );
    out.put_slice(text.as_bytes());
    out.put_slice(b"\"}}}");
    out.freeze()
}

/// Verifies request `id`'s outcome; counts it in `errors` if it failed. Only a request left
/// unanswered within the timeout is an error here: it stops the run.
fn settle(
    verifier: &mut Verifier,
    errors: &mut ErrorCounts,
    wait: Duration,
    id: u64,
    payload: usize,
    outcome: Result<Vec<Bytes>, Failure>,
) -> Result<(), DriveError> {
    let messages = match outcome {
        Ok(m) => m,
        Err(Failure::Timeout) => {
            return Err(verify(format!(
                "request {id} got no answer within {:.1} s",
                wait.as_secs_f64()
            )))
        }
        Err(e) => {
            *match e {
                Failure::Status(..) => &mut errors.non_2xx,
                Failure::BadReply(_) => &mut errors.bad_replies,
                Failure::Transport(_) | Failure::Timeout => &mut errors.transport,
            } += 1;
            errors.note(|| format!("request {id}: {e}"));
            return Ok(());
        }
    };
    let mut replies = 0;
    let mut problem = None;
    for m in &messages {
        match verifier.check(m, payload) {
            Ok(Received::Reply(got)) if got == id => replies += 1,
            Ok(Received::Reply(got)) => {
                problem = Some(format!(
                    "the answer to request {id} is the reply to id {got}"
                ))
            }
            Ok(Received::Other) => {}
            Err(e) => problem = Some(e.to_string()),
        }
    }
    let problem = problem.or(match replies {
        1 => None,
        0 => Some(format!(
            "the answer to request {id} carries no JSON-RPC response ({} other message(s))",
            messages.len()
        )),
        n => Some(format!("the answer to request {id} carries {n} responses")),
    });
    if let Some(p) = problem {
        errors.bad_replies += 1;
        errors.note(|| format!("request {id}: {p}"));
    }
    Ok(())
}

impl Calls for HttpCalls<'_> {
    fn one(&mut self, payload: usize) -> Result<(), DriveError> {
        self.filler.grow(payload);
        let id = self.ids(1).start().to_owned();
        let outcome = self
            .rt
            .block_on(self.session.post(body(&self.filler, id, payload)));
        settle(
            &mut self.verifier,
            &mut self.errors,
            self.wait,
            id,
            payload,
            outcome,
        )
    }

    fn many(&mut self, calls: usize, window: usize, payload: usize) -> Result<(), DriveError> {
        self.filler.grow(payload);
        let ids = self.ids(calls);
        let HttpCalls {
            rt,
            session,
            verifier,
            filler,
            errors,
            wait,
            ..
        } = self;
        let filler = &*filler;
        let session = *session;
        rt.block_on(async {
            let mut answers = stream::iter(ids)
                .map(|id| async move { (id, session.post(body(filler, id, payload)).await) })
                .buffer_unordered(window);
            while let Some((id, outcome)) = answers.next().await {
                settle(verifier, errors, *wait, id, payload, outcome)?;
            }
            Ok(())
        })
    }

    fn own_cpu(&self) -> Option<Duration> {
        procfs::own_cpu_time()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies_carry_their_ids_text() {
        let mut filler = Filler::default();
        filler.grow(8);
        let b = body(&filler, 12, 8);
        assert_eq!(
            &b[..],
            br#"{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"echo","arguments":{"text":"12.xxxxx"}}}"#
        );
        let v: serde_json::Value =
            serde_json::from_slice(&body(&filler, 123456789, 4)).unwrap_or_default();
        assert_eq!(v["params"]["arguments"]["text"], "123456789.");
    }
}
