//! Shared by the client's, the harness's and the bench's integration tests (included with
//! `#[path]`): the workspace root, and the `mcp-echo-server` binary of the profile the tests
//! were built with, built once if it is missing. `CARGO_BIN_EXE_*` covers only a crate's own
//! binaries, and a dev-dependency's binaries are not built by `cargo test`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The workspace root: the parent of the crate whose tests include this file.
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("a crate directory has a parent")
        .to_path_buf()
}

/// `target/<profile>/mcp-echo-server`, found from the test executable's path (tests run from
/// `target/<profile>/deps/`, binaries live in `target/<profile>/`), where a harness or bench
/// built in the same profile finds it too.
pub fn echo_server() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        let exe = std::env::current_exe().expect("the test executable's path");
        let deps = exe.parent().expect("the test executable is in a directory");
        let profile_dir = if deps.file_name().is_some_and(|n| n == "deps") {
            deps.parent().expect("deps/ is in a profile directory")
        } else {
            deps
        };
        echo_server_in(profile_dir, &workspace_root())
    })
}

/// `profile_dir/mcp-echo-server`, built with the same profile and target dir if absent.
fn echo_server_in(profile_dir: &Path, workspace_root: &Path) -> PathBuf {
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
