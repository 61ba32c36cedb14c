//! How a server process ended, in the words reports use.

use std::process::ExitStatus;

/// `exited with status 1`, `was killed by signal 9 (SIGKILL)`.
pub fn describe_exit(status: ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    if let Some(code) = status.code() {
        return format!("exited with status {code}");
    }
    match status.signal() {
        Some(n) => match nix::sys::signal::Signal::try_from(n) {
            Ok(signal) => format!("was killed by signal {n} ({signal})"),
            Err(_) => format!("was killed by signal {n}"),
        },
        None => format!("ended ({status})"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::ExitStatusExt;

    #[test]
    fn exits_are_described_with_their_signal() {
        assert_eq!(
            describe_exit(ExitStatus::from_raw(9)),
            "was killed by signal 9 (SIGKILL)"
        );
        assert_eq!(
            describe_exit(ExitStatus::from_raw(1 << 8)),
            "exited with status 1"
        );
    }
}
