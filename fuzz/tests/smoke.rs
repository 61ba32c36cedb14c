//! Runs every check on the committed seeds and on pseudo-random inputs, without libFuzzer:
//! `cargo test` in `fuzz/` (stable is enough).

use std::path::Path;

use mcp_fuzz::input::Rng;
use mcp_fuzz::{client_check, codec_check, params_check, parse_check, server_check};

fn inputs(target: &str, random: usize) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("seeds")
        .join(target);
    if let Ok(entries) = std::fs::read_dir(&dir) {
        let mut paths: Vec<_> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
        paths.sort();
        for p in paths {
            out.push(std::fs::read(&p).expect("seed readable"));
        }
    }
    let mut rng = Rng::new(0x5eed_u64 ^ target.len() as u64);
    for _ in 0..random {
        let len = rng.size(600);
        out.push((0..len).map(|_| rng.next_u64() as u8).collect());
    }
    out
}

#[test]
fn codec() {
    for data in inputs("codec", 500) {
        codec_check::run(&data);
    }
}

#[test]
fn parse() {
    for data in inputs("parse", 500) {
        parse_check::run(&data);
        params_check::run(&data);
    }
}

#[test]
fn server_dispatch() {
    for data in inputs("server_dispatch", 200) {
        server_check::run(&data);
    }
}

#[test]
fn client_replies() {
    for data in inputs("client_replies", 200) {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .start_paused(true)
            .build()
            .expect("a tokio runtime");
        let s = client_check::Scenario::from_bytes(&data, client_check::Timing::Virtual);
        let r = client_check::run_client(&s, &rt);
        client_check::check(&s, &r, client_check::Timing::Virtual);
    }
}
