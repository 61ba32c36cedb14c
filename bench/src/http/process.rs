//! An HTTP server the bench starts (`--url URL -- COMMAND`): spawned in a process group of its
//! own, waited on until its port accepts, stopped with SIGTERM (then SIGKILL) after the run.

use std::io::ErrorKind;
use std::net::{SocketAddr, TcpStream};
use std::os::unix::process::CommandExt;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use mcp_client::ServerCommand;
use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;

use crate::error::DriveError;

/// How long to wait between two tries of a port that refused: short, since the start time
/// includes it (a refused loopback connect costs a few µs). Starting a server gives no event to
/// wait on but the port accepting.
const PORT_POLL: Duration = Duration::from_micros(100);
/// How long to wait between two looks at a server that was asked to stop.
const EXIT_POLL: Duration = Duration::from_millis(1);

/// A running server process; killed with its group when dropped.
#[derive(Debug)]
pub struct ServerProcess {
    child: Child,
    shown: String,
}

impl ServerProcess {
    /// Spawns `command` with stdin and stdout on /dev/null (stdout is the bench's report) and
    /// stderr inherited, in a new process group, so stopping it also stops what it started.
    pub fn spawn(command: &ServerCommand) -> Result<ServerProcess, DriveError> {
        let shown = command.display();
        let child = command
            .to_command()
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .process_group(0)
            .spawn()
            .map_err(|e| DriveError::Start(format!("cannot start {shown}: {e}")))?;
        Ok(ServerProcess { child, shown })
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Waits until `addr` accepts a connection, at most `wait`; fails if the server exits first.
    pub fn wait_listening(&mut self, addr: SocketAddr, wait: Duration) -> Result<(), DriveError> {
        let deadline = Instant::now() + wait;
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(DriveError::Start(format!(
                    "{} exited ({status}) before accepting connections on {addr}",
                    self.shown
                )));
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(DriveError::Start(format!(
                    "{} did not accept connections on {addr} within {:.1} s",
                    self.shown,
                    wait.as_secs_f64()
                )));
            }
            match TcpStream::connect_timeout(&addr, left) {
                Ok(_) => return Ok(()),
                Err(e) if e.kind() == ErrorKind::ConnectionRefused => std::thread::sleep(PORT_POLL),
                Err(e) if e.kind() == ErrorKind::TimedOut => {}
                Err(e) => {
                    return Err(DriveError::Start(format!(
                        "cannot connect to {addr} to see whether {} listens: {e}",
                        self.shown
                    )))
                }
            }
        }
    }

    /// SIGTERM to the group, SIGKILL if it has not exited within `wait`; returns whether it
    /// exited on SIGTERM.
    pub fn stop(mut self, wait: Duration) -> bool {
        self.signal(Signal::SIGTERM);
        let deadline = Instant::now() + wait;
        while Instant::now() < deadline {
            match self.child.try_wait() {
                Ok(Some(_)) | Err(_) => return true,
                Ok(None) => std::thread::sleep(EXIT_POLL),
            }
        }
        false
    }

    fn signal(&self, signal: Signal) {
        if let Ok(pid) = i32::try_from(self.child.id()) {
            let _ = killpg(Pid::from_raw(pid), signal);
        }
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        if !matches!(self.child.try_wait(), Ok(Some(_))) {
            self.signal(Signal::SIGKILL);
            let _ = self.child.wait();
        }
    }
}
