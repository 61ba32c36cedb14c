//! Whether the port of a `--url` accepts connections: refused before the harness starts a
//! server on it (something else already listens there, and would be tested instead), waited
//! for after, and waited for when the server is started by someone else (a server started
//! just before the harness is still found).

use std::time::Duration;

use tokio::net::TcpStream;

use super::endpoint::Endpoint;

/// The bound of one connection attempt: on loopback a refusal comes at once.
const ATTEMPT: Duration = Duration::from_secs(1);

/// Between attempts: a port that is not open yet has nothing to wait on but time.
const RETRY_EVERY: Duration = Duration::from_millis(50);

/// Is `host` this machine (127.0.0.0/8, `::1`, `localhost`)? Only there is "already in use"
/// something the harness can judge, and only there does it connect without a proxy.
pub fn is_loopback(host: &str) -> bool {
    let host = host.trim_matches(['[', ']']);
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// One attempt to connect to `host:port`: `Ok` if something accepted, else why not
/// (`Connection refused`).
pub async fn connect(host: &str, port: u16) -> std::io::Result<()> {
    match tokio::time::timeout(ATTEMPT, TcpStream::connect((host, port))).await {
        Ok(Ok(_)) => Ok(()),
        Ok(Err(e)) => Err(e),
        Err(_) => Err(std::io::Error::new(
            std::io::ErrorKind::TimedOut,
            format!("no answer to the connection attempt within {ATTEMPT:?}"),
        )),
    }
}

/// Connects to `host:port` until it accepts, `budget` has passed, or `gone` says the server
/// ended; `on_refused` hears the first error, and each new one. `Err`: the last error.
pub async fn wait_until_open(
    host: &str,
    port: u16,
    budget: Duration,
    mut gone: impl FnMut() -> bool,
    mut on_refused: impl FnMut(&std::io::Error),
) -> Result<(), Closed> {
    let deadline = tokio::time::Instant::now() + budget;
    let mut last = String::new();
    loop {
        let error = match connect(host, port).await {
            Ok(()) => return Ok(()),
            Err(e) => e,
        };
        let text = describe(&error);
        if last != text {
            on_refused(&error);
            last = text;
        }
        if gone() {
            return Err(Closed::Ended(last));
        }
        if tokio::time::Instant::now() + RETRY_EVERY >= deadline {
            return Err(Closed::Refused(last));
        }
        tokio::time::sleep(RETRY_EVERY).await;
    }
}

/// Waits, up to `budget`, for a server someone else starts to accept connections at
/// `endpoint` (a loopback `--url` given without a command); `announce`: say on stderr why it
/// is waited for. Other hosts are not waited for: a proxy may stand between.
pub async fn await_server(
    endpoint: &Endpoint,
    budget: Duration,
    announce: bool,
) -> Result<(), NotListening> {
    let Some((host, port)) = endpoint.authority().filter(|(h, _)| is_loopback(h)) else {
        return Ok(());
    };
    let waited = wait_until_open(
        &host,
        port,
        budget,
        || false,
        |e| {
            if announce {
                eprintln!(
                    "mcp-conformance: {host}:{port}: {}; waiting up to {budget:?} \
                     (--start-timeout) for a server to listen there",
                    describe(e)
                );
            }
        },
    )
    .await;
    match waited {
        Ok(()) => Ok(()),
        Err(Closed::Refused(error) | Closed::Ended(error)) => Err(NotListening {
            host,
            port,
            budget,
            error,
        }),
    }
}

/// Nothing accepted connections at a `--url` given without a command.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "nothing accepts connections at {host}:{port} ({error}) after {budget:?} \
     (--start-timeout): start the server first, or give the command that starts it after \
     `--` (mcp-conformance --url URL -- COMMAND...)"
)]
pub struct NotListening {
    host: String,
    port: u16,
    budget: Duration,
    error: String,
}

/// `connection refused`, in the words of the error's kind where it has one.
fn describe(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::ConnectionRefused => "connection refused".to_owned(),
        _ => e.to_string(),
    }
}

/// Why a port never opened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Closed {
    /// Every attempt failed within the budget; the last error (`connection refused`).
    Refused(String),
    /// The server started for it ended first; the last error.
    Ended(String),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_hosts() {
        for host in [
            "127.0.0.1",
            "127.3.2.1",
            "::1",
            "[::1]",
            "localhost",
            "LocalHost",
        ] {
            assert!(is_loopback(host), "{host}");
        }
        for host in [
            "10.0.0.1",
            "example.com",
            "0.0.0.0",
            "::",
            "localhost.example",
        ] {
            assert!(!is_loopback(host), "{host}");
        }
    }
}
