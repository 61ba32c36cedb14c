//! An interrupted harness (Ctrl-C, SIGTERM, a closed terminal) ends the servers it started
//! before it exits. They run in process groups of their own, so the terminal's SIGINT does
//! not reach them: without this they would outlive the run.

use std::future::Future;

use crate::groups;
use crate::stops::Stops;

/// Runs `run` to its exit code, then ends whatever server process group is still held. If
/// the harness is interrupted first, it ends every group (SIGTERM, then SIGKILL after the
/// grace period; a second interruption kills them at once) and exits 128 + the signal's
/// number (130 for Ctrl-C), as a shell reports a process ended by it.
pub async fn run_to_the_end(run: impl Future<Output = u8>) -> u8 {
    let mut interrupts = match Stops::install() {
        Ok(interrupts) => interrupts,
        Err(e) => {
            eprintln!("mcp-conformance: cannot catch SIGINT/SIGTERM ({e}); an interrupted run may leave servers running");
            let code = run.await;
            groups::end_all(groups::GRACE).await;
            return code;
        }
    };
    tokio::pin!(run);
    let signal = tokio::select! {
        code = &mut run => {
            groups::end_all(groups::GRACE).await;
            return code;
        }
        signal = interrupts.next() => signal,
    };
    eprintln!(
        "\nmcp-conformance: interrupted ({}): ending the servers it started",
        signal.name()
    );
    tokio::select! {
        _ = groups::end_all(groups::GRACE) => {}
        again = interrupts.next() => {
            eprintln!(
                "mcp-conformance: interrupted again ({}): killing them",
                again.name()
            );
        }
    }
    // Anything started while they were being ended.
    groups::kill_all();
    signal.exit_code()
}
