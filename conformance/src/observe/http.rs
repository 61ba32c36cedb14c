//! The Streamable HTTP proxy (not yet).

use std::net::SocketAddr;

use super::cli::Options;

pub(super) async fn run(_opts: &Options, _listen: SocketAddr, _upstream: &str) -> u8 {
    super::usage("--listen is not built yet")
}
