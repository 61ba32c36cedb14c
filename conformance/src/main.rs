//! `mcp-conformance`: the stdio conformance harness for any MCP server.

fn main() -> std::process::ExitCode {
    mcp_conformance::cli::main()
}
