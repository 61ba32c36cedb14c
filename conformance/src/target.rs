//! What to test: a command line, or the stdio servers a host config file declares.
//!
//! Config files of Claude Desktop (`claude_desktop_config.json`), Claude Code (`.mcp.json`) and
//! Cursor (`mcp.json`) share one shape: `{"mcpServers": {NAME: {command, args, env}}}`. HTTP
//! entries (`url`, or `type` `http`/`sse`) are listed as skipped.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use mcp_client::ServerCommand;
use serde::Deserialize;

/// One server under test.
#[derive(Debug, Clone, PartialEq)]
pub struct Target {
    pub name: String,
    pub program: String,
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
    pub cwd: Option<PathBuf>,
    /// Our own `mcp-echo-server`: the `echo` profile applies by default.
    pub bundled: bool,
    /// Why this entry is not tested (an HTTP server in a config file).
    pub skip: Option<String>,
}

impl Target {
    pub fn new(name: impl Into<String>, program: impl Into<String>, args: Vec<String>) -> Self {
        Target {
            name: name.into(),
            program: program.into(),
            args,
            env: Vec::new(),
            cwd: None,
            bundled: false,
            skip: None,
        }
    }

    pub fn command(&self) -> ServerCommand {
        let mut cmd = ServerCommand::new(&self.program).args(&self.args);
        for (k, v) in &self.env {
            cmd = cmd.env(k, v);
        }
        if let Some(dir) = &self.cwd {
            cmd = cmd.current_dir(dir);
        }
        cmd
    }

    pub fn display(&self) -> String {
        std::iter::once(self.program.as_str())
            .chain(self.args.iter().map(String::as_str))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// The bundled `mcp-echo-server`: beside this executable (installed together, or in the same
/// `target/<profile>` directory), or one directory up (a test binary in `target/<profile>/deps`).
pub fn bundled_server() -> Result<Target, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot locate this executable: {e}"))?;
    let dir = exe.parent().unwrap_or(Path::new("."));
    let candidates = [
        dir.join("mcp-echo-server"),
        dir.join("..").join("mcp-echo-server"),
    ];
    let found = candidates.iter().find(|p| p.is_file()).ok_or_else(|| {
        format!(
            "no target given and the bundled mcp-echo-server is not beside {}; build it with \
             `cargo build -p mcp-echo-server` (or `cargo install --path server`), or name a server: \
             mcp-conformance -- <command> [args...]",
            exe.display()
        )
    })?;
    let mut target = Target::new("mcp-echo-server", found.display().to_string(), Vec::new());
    target.bundled = true;
    Ok(target)
}

#[derive(Debug, Deserialize)]
struct ConfigFile {
    #[serde(rename = "mcpServers")]
    mcp_servers: BTreeMap<String, ConfigEntry>,
}

#[derive(Debug, Deserialize)]
struct ConfigEntry {
    #[serde(default)]
    command: Option<String>,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    #[serde(default)]
    cwd: Option<PathBuf>,
    #[serde(default, rename = "type")]
    kind: Option<String>,
    #[serde(default)]
    url: Option<String>,
}

/// Reads the stdio servers of a host config file; `only` picks one by name.
pub fn from_config(path: &Path, only: Option<&str>) -> Result<Vec<Target>, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read config file {}: {e}", path.display()))?;
    let file: ConfigFile = serde_json::from_str(&text).map_err(|e| {
        format!(
            "{} is not an MCP host config ({{\"mcpServers\": {{NAME: {{\"command\", \"args\", \"env\"}}}}}}): {e}",
            path.display()
        )
    })?;
    if let Some(name) = only {
        if !file.mcp_servers.contains_key(name) {
            let names: Vec<&str> = file.mcp_servers.keys().map(String::as_str).collect();
            return Err(format!(
                "no server named {name:?} in {}; it declares: {}",
                path.display(),
                names.join(", ")
            ));
        }
    }
    let mut targets = Vec::new();
    for (name, entry) in file.mcp_servers {
        if only.is_some_and(|o| o != name) {
            continue;
        }
        let http = entry.url.is_some()
            || matches!(
                entry.kind.as_deref(),
                Some("http" | "sse" | "streamable-http")
            );
        let mut target = Target::new(
            name.clone(),
            entry.command.as_deref().map(expand).unwrap_or_default(),
            entry.args.iter().map(|a| expand(a)).collect(),
        );
        target.env = entry
            .env
            .iter()
            .map(|(k, v)| (k.clone(), expand(v)))
            .collect();
        target.cwd = entry.cwd;
        if http {
            target.skip = Some(format!(
                "HTTP server ({}): this harness tests stdio servers",
                entry.url.as_deref().unwrap_or("no url")
            ));
        } else if entry.command.is_none() {
            return Err(format!(
                "server {name:?} in {} has no \"command\"",
                path.display()
            ));
        }
        targets.push(target);
    }
    Ok(targets)
}

/// Expands `${VAR}` and `${VAR:-default}` (Claude Code) and `${env:VAR}` (Cursor); an unset
/// variable without a default becomes empty, as in those hosts.
pub fn expand(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            out.push_str(&rest[start..]);
            return out;
        };
        let inner = &after[..end];
        let inner = inner.strip_prefix("env:").unwrap_or(inner);
        let (name, default) = match inner.split_once(":-") {
            Some((n, d)) => (n, Some(d)),
            None => (inner, None),
        };
        match std::env::var(name) {
            Ok(v) if !v.is_empty() => out.push_str(&v),
            _ => out.push_str(default.unwrap_or("")),
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    out
}

/// Parses `K=V` for `--env`.
pub fn parse_env(kv: &str) -> Result<(String, String), String> {
    match kv.split_once('=') {
        Some((k, v)) if !k.is_empty() => Ok((k.to_owned(), v.to_owned())),
        _ => Err(format!("--env expects KEY=VALUE, got {kv:?}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expands_variables() {
        std::env::set_var("MCP_CONF_TEST_VAR", "x");
        assert_eq!(expand("a${MCP_CONF_TEST_VAR}b"), "axb");
        assert_eq!(expand("${env:MCP_CONF_TEST_VAR}"), "x");
        assert_eq!(expand("${MCP_CONF_UNSET_VAR:-dflt}/p"), "dflt/p");
        assert_eq!(expand("${MCP_CONF_UNSET_VAR}"), "");
        assert_eq!(expand("no vars ${"), "no vars ${");
    }

    #[test]
    fn reads_host_configs() {
        let dir = std::env::temp_dir().join(format!("mcp-conf-target-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("mcp.json");
        std::fs::write(
            &path,
            r#"{"mcpServers": {
                "echo": {"type": "stdio", "command": "mcp-echo-server", "args": ["--log-level", "debug"], "env": {"K": "V"}},
                "remote": {"type": "http", "url": "https://example.invalid/mcp"},
                "bare": {"command": "node", "args": ["s.js"]}
            }}"#,
        )
        .unwrap();
        let all = from_config(&path, None).unwrap();
        assert_eq!(all.len(), 3);
        let echo = all.iter().find(|t| t.name == "echo").unwrap();
        assert_eq!(echo.display(), "mcp-echo-server --log-level debug");
        assert_eq!(echo.env, vec![("K".to_owned(), "V".to_owned())]);
        assert!(all
            .iter()
            .find(|t| t.name == "remote")
            .unwrap()
            .skip
            .is_some());
        assert_eq!(from_config(&path, Some("bare")).unwrap().len(), 1);
        assert!(from_config(&path, Some("nope"))
            .unwrap_err()
            .contains("echo"));
        std::fs::write(&path, "{}").unwrap();
        assert!(from_config(&path, None).unwrap_err().contains("mcpServers"));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
