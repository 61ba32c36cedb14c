//! `client` mode over stdio, the harness's side: a private directory with the relay script the
//! client is given and the Unix socket the relay connects back to; each relay connection's
//! bytes are split into messages (newline-delimited JSON, or `Content-Length` frames if the
//! client starts with them), recorded, fed to the script, and its answers written back in the
//! client's framing.

use std::collections::VecDeque;
use std::io;
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bytes::BytesMut;
use futures::StreamExt;
use mcp_protocol::codec::RawFrame;
use mcp_protocol::{FramingMode, StdioCodec};
use tokio::io::AsyncWriteExt;
use tokio::net::{UnixListener, UnixStream};
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio_util::codec::{FramedRead, LinesCodec};

use super::live::Live;
use super::relay::{signal_named, Line, Report};
use super::timeline::{Message, Side, What};

/// The largest client message kept whole; a longer one is recorded as garbage.
const MAX_MESSAGE: usize = 4 * 1024 * 1024;
/// The longest relay report line (a base64 chunk of stdin, with room to spare).
const MAX_REPORT: usize = 1024 * 1024;

/// The relay of one scenario: its script, its socket, the connections it serves.
#[derive(Debug)]
pub(crate) struct RelayServer {
    dir: PathBuf,
    script: PathBuf,
    accept: JoinHandle<()>,
    /// Relay connections still open.
    open: watch::Receiver<usize>,
}

impl RelayServer {
    /// Makes the directory, the script and the socket, and starts accepting relays.
    pub(crate) fn start(live: Arc<Live>, exe: &Path) -> io::Result<RelayServer> {
        let dir = private_dir()?;
        let made = (|| {
            let socket = dir.join("relay.sock");
            let listener = UnixListener::bind(&socket)?;
            let script = dir.join("mcp-conformance-relay");
            std::fs::write(&script, relay_script(exe, &socket))?;
            std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o700))?;
            Ok::<_, io::Error>((listener, script))
        })();
        let (listener, script) = match made {
            Ok(made) => made,
            Err(e) => {
                let _ = std::fs::remove_dir_all(&dir);
                return Err(e);
            }
        };
        let (count, open) = watch::channel(0usize);
        let accept = tokio::spawn(accept(listener, live, Arc::new(count)));
        Ok(RelayServer {
            dir,
            script,
            accept,
            open,
        })
    }

    /// The executable the client is given.
    pub(crate) fn script(&self) -> &Path {
        &self.script
    }

    /// Waits (at most `wait`) for the relays to end: after the client exits they see stdin
    /// close and report it.
    pub(crate) async fn settle(&mut self, wait: Duration) {
        let _ = tokio::time::timeout(wait, self.open.wait_for(|n| *n == 0)).await;
    }
}

impl Drop for RelayServer {
    fn drop(&mut self) {
        self.accept.abort();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// `#!/bin/sh` + `exec '<exe>' __relay '<socket>'`, every path single-quoted.
fn relay_script(exe: &Path, socket: &Path) -> String {
    format!(
        "#!/bin/sh\nexec {} __relay {}\n",
        quote(&exe.to_string_lossy()),
        quote(&socket.to_string_lossy())
    )
}

fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// A fresh directory only this user can enter, under the system temp dir.
fn private_dir() -> io::Result<PathBuf> {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let base = std::env::temp_dir();
    for _ in 0..100 {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let dir = base.join(format!(
            "mcp-conformance-{}-{}-{nanos:x}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::other(
        "cannot make a private temporary directory",
    ))
}

async fn accept(listener: UnixListener, live: Arc<Live>, open: Arc<watch::Sender<usize>>) {
    while let Ok((stream, _)) = listener.accept().await {
        open.send_modify(|n| *n += 1);
        let (live, open) = (Arc::clone(&live), Arc::clone(&open));
        tokio::spawn(async move {
            serve(stream, &live).await;
            open.send_modify(|n| *n -= 1);
        });
    }
}

/// The server messages written to one relay and not yet on its stdout: when the relay says it
/// wrote them, they are timed then (the client could read them from that moment), so that a
/// client message the relay read before is ordered before them.
#[derive(Debug, Default)]
struct Delivery {
    written: u64,
    delivered: u64,
    /// Event index of each server message and the byte offset its frame ends at.
    pending: VecDeque<(usize, u64)>,
}

impl Delivery {
    fn delivered(&mut self, n: usize, at: Duration, live: &Live) {
        self.delivered += n as u64;
        live.with(|i| {
            while let Some(&(event, end)) = self.pending.front() {
                if end > self.delivered {
                    break;
                }
                i.retime(event, at);
                self.pending.pop_front();
            }
        });
    }
}

/// One relay connection, to its end.
async fn serve(stream: UnixStream, live: &Live) {
    let (read, mut write) = stream.into_split();
    let mut reports = FramedRead::new(read, LinesCodec::new_with_max_length(MAX_REPORT));
    let mut codec = StdioCodec::new(FramingMode::Auto)
        .strict()
        .with_max_message_bytes(MAX_MESSAGE);
    let mut buf = BytesMut::new();
    let mut delivery = Delivery::default();
    let mut exit = None;
    while let Some(Ok(line)) = reports.next().await {
        let Ok(Line { report, t }) = serde_json::from_str::<Line>(&line) else {
            continue;
        };
        let at = live.since_start(t);
        live.with(|i| i.stamp = Some(at));
        let mut frames = Vec::new();
        let eof = matches!(report, Report::Eof(_));
        match report {
            Report::Stdin(_) => {
                buf.extend_from_slice(&report.stdin_bytes().unwrap_or_default());
                while let Ok(Some(frame)) = codec.decode_raw(&mut buf) {
                    frames.push(frame);
                }
            }
            Report::Eof(_) => {
                while let Ok(Some(frame)) = codec.decode_raw_eof(&mut buf) {
                    frames.push(frame);
                }
            }
            Report::Signal(name) => {
                if let Some(signal) = signal_named(&name) {
                    live.push(What::Signal(signal));
                }
            }
            Report::Out(n) => delivery.delivered(n, at, live),
            Report::Exit(code) => exit = Some(code),
        }
        let out = answer(frames, &codec, live, &mut delivery);
        if eof {
            live.push(What::StdinClosed);
        }
        live.with(|i| i.stamp = None);
        if !out.is_empty() {
            let _ = write.write_all(&out).await;
        }
    }
    live.push(What::ServerExited { code: exit });
}

/// Records the frames of the client that arrived together, then feeds them to the script and
/// records its answers; the bytes to write back, in the client's framing. The client wrote all
/// of the frames before it could read any answer, so they are recorded first.
fn answer(
    frames: Vec<RawFrame>,
    codec: &StdioCodec,
    live: &Live,
    delivery: &mut Delivery,
) -> Vec<u8> {
    if frames.is_empty() {
        return Vec::new();
    }
    live.with(|i| {
        let mut messages = Vec::new();
        for frame in frames {
            let raw = match frame {
                Ok(raw) => raw.to_vec(),
                Err(e) => e.to_string().into_bytes(),
            };
            match serde_json::from_slice::<serde_json::Value>(&raw) {
                Ok(json) => {
                    i.message(Side::Client, raw, None);
                    messages.push(json);
                }
                Err(_) => {
                    i.push(What::Garbage {
                        from: Side::Client,
                        raw,
                    });
                }
            }
        }
        let mut out = BytesMut::new();
        for json in &messages {
            for m in i.steps(json, true, false).iter().flat_map(|s| &s.messages) {
                let body = serde_json::to_vec(m).unwrap_or_default();
                if codec.encode_value(m, &mut out).is_ok() {
                    if let Some(event) = i.push(What::Message(Message {
                        from: Side::Server,
                        raw: body,
                        json: Some(m.clone()),
                        exchange: None,
                    })) {
                        delivery
                            .pending
                            .push_back((event, delivery.written + out.len() as u64));
                    }
                }
            }
        }
        delivery.written += out.len() as u64;
        out.to_vec()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_script_quotes_every_path() {
        let s = relay_script(
            Path::new("/opt/it's here/mcp"),
            Path::new("/tmp/a b/s.sock"),
        );
        assert_eq!(
            s,
            "#!/bin/sh\nexec '/opt/it'\\''s here/mcp' __relay '/tmp/a b/s.sock'\n"
        );
    }
}
