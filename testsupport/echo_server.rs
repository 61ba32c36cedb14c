//! Shared by the client's and the harness's integration tests (included with `#[path]`): the
//! `mcp-echo-server` binary of a target profile directory, built once if it is missing.
//! `CARGO_BIN_EXE_*` covers only a crate's own binaries, and a dev-dependency's binaries are
//! not built by `cargo test`.

use std::path::{Path, PathBuf};
use std::process::Command;

/// `target/<profile>/mcp-echo-server`, built with the same profile and target dir if absent.
pub fn echo_server_in(profile_dir: &Path, workspace_root: &Path) -> PathBuf {
    let bin = profile_dir.join(format!("mcp-echo-server{}", std::env::consts::EXE_SUFFIX));
    if bin.is_file() {
        return bin;
    }
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.args(["build", "-p", "mcp-echo-server"])
        .current_dir(workspace_root);
    match profile_dir.file_name().and_then(|n| n.to_str()) {
        Some("debug") | None => {}
        Some("release") => {
            cmd.arg("--release");
        }
        Some(profile) => {
            cmd.args(["--profile", profile]);
        }
    }
    if let Some(target_dir) = profile_dir.parent() {
        cmd.arg("--target-dir").arg(target_dir);
    }
    let status = cmd.status().unwrap();
    assert!(
        status.success(),
        "building mcp-echo-server failed: {status}"
    );
    assert!(
        bin.is_file(),
        "`cargo build -p mcp-echo-server` did not produce {}",
        bin.display()
    );
    bin
}
