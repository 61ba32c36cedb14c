//! What to test: a command line, or the stdio servers a host config file declares.
//!
//! Config files of Claude Desktop (`claude_desktop_config.json`), Claude Code (`.mcp.json`) and
//! Cursor (`mcp.json`) share one shape: `{"mcpServers": {NAME: {command, args, env}}}`. HTTP
//! entries (`url` with optional `headers`, `type` `http`) are tested over Streamable HTTP;
//! `type` `sse` (the deprecated 2024-11-05 HTTP+SSE transport) is listed as skipped.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use std::sync::Arc;

use mcp_client::ServerCommand;
use serde::Deserialize;

use crate::transport::http::{parse_header, HeaderError};
use crate::transport::Endpoint;

/// Why the targets cannot be made: no bundled server, or a host config that cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum TargetError {
    #[error("cannot locate this executable: {0}")]
    NoExe(std::io::Error),
    #[error(
        "no target given and the bundled mcp-echo-server is not beside {}; build it with \
         `cargo build -p mcp-echo-server` (or `cargo install --path server`), or name a server: \
         mcp-conformance -- <command> [args...]",
        .0.display()
    )]
    NoBundled(PathBuf),
    #[error("cannot read config file {}: {source}", .path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "{} is not an MCP host config ({{\"mcpServers\": {{NAME: {{\"command\", \"args\", \"env\"}}}}}}): {source}",
        .path.display()
    )]
    NotAConfig {
        path: PathBuf,
        source: serde_json::Error,
    },
    #[error("no server named {name:?} in {}; it declares: {declared}", .path.display())]
    NoSuchServer {
        name: String,
        path: PathBuf,
        declared: String,
    },
    #[error("server {name:?} in {} is an HTTP server with no \"url\"", .path.display())]
    NoUrl { name: String, path: PathBuf },
    #[error("server {name:?} in {}: {source}", .path.display())]
    Header {
        name: String,
        path: PathBuf,
        source: HeaderError,
    },
    #[error("server {name:?} in {} has no \"command\"", .path.display())]
    NoCommand { name: String, path: PathBuf },
}

/// One server under test: how to start it, and what the harness knows of it.
#[derive(Debug, Clone)]
pub struct Target {
    pub name: String,
    pub command: ServerCommand,
    /// Our own `mcp-echo-server`: the `echo` profile applies by default.
    pub bundled: bool,
    /// Why this entry is not tested (an HTTP server in a config file).
    pub skip: Option<String>,
    /// The name was made from the command line, not given (a config file's entry name): the
    /// server's own `serverInfo.name` replaces it once known.
    pub auto_name: bool,
    /// Reached over Streamable HTTP at this endpoint; `command`, if it names a program, is
    /// started first and stopped after the checks.
    pub http: Option<Arc<Endpoint>>,
}

impl Target {
    pub fn new(name: impl Into<String>, command: ServerCommand) -> Self {
        Target {
            name: name.into(),
            command,
            bundled: false,
            skip: None,
            auto_name: false,
            http: None,
        }
    }

    /// A server at `endpoint` (`--url`), started first by `command` if one is given.
    pub fn from_url(endpoint: Endpoint, command: Option<(&str, &[String])>) -> Target {
        let cmd = match command {
            Some((program, args)) => ServerCommand::new(program).args(args),
            None => ServerCommand::new(""),
        };
        let name = match command {
            Some((program, args)) => command_label(program, args),
            None => url_label(&endpoint.url),
        };
        let mut target = Target::new(name, cmd);
        target.auto_name = true;
        target.http = Some(Arc::new(endpoint));
        target
    }

    /// Is there a process to start before testing (a command after `--url URL --`)?
    pub fn launches(&self) -> bool {
        !self.command.get_program().is_empty()
    }

    /// A target given as a command line, named after the program it runs: the package or
    /// script in it (`npx -y @scope/server` → `@scope/server`, `python3 -S x/server.py` →
    /// `server.py`), until the server names itself.
    pub fn from_command(program: &str, args: &[String]) -> Target {
        let command = ServerCommand::new(program).args(args);
        let mut target = Target::new(command_label(program, args), command);
        target.auto_name = true;
        target
    }

    /// The same target with `env` set and `cwd` as its working directory (`--env`, `--cwd`).
    pub fn with(mut self, env: &[(String, String)], cwd: Option<&Path>) -> Target {
        for (k, v) in env {
            self.command = self.command.env(k, v);
        }
        if let Some(dir) = cwd {
            self.command = self.command.current_dir(dir);
        }
        self
    }

    pub fn display(&self) -> String {
        match &self.http {
            Some(e) if self.launches() => {
                format!("{} (started: {})", e.url, self.command.display())
            }
            Some(e) => e.url.clone(),
            None => self.command.display(),
        }
    }
}

/// A URL's host, port and path, for a name (`127.0.0.1:3001/mcp`).
fn url_label(url: &str) -> String {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    rest.split(['?', '#']).next().unwrap_or(rest).to_owned()
}

/// Launchers whose first argument that is not an option (or `K=V`) is what they run.
const LAUNCHERS: [&str; 14] = [
    "env", "npx", "pnpx", "bunx", "uvx", "pipx", "node", "deno", "bun", "python", "python3", "uv",
    "exec", "nohup",
];

/// What a command line runs, for a name: past launchers, interpreters and their options
/// (`env K=V`, `npx -y`, `python3 -m module`, `uv run`, `sh -c 'exec …'`), the package,
/// module or script; its file name if it is a path.
pub fn command_label(program: &str, args: &[String]) -> String {
    let words: Vec<&str> = std::iter::once(program)
        .chain(args.iter().map(String::as_str))
        .collect();
    let mut i = 0;
    let mut interpreter = None;
    while i < words.len() {
        let word = words[i];
        let base = word.rsplit('/').next().unwrap_or(word);
        let launcher = LAUNCHERS.contains(&base) || base.starts_with("python3.");
        if launcher || word.contains('=') && !word.starts_with('-') {
            if launcher {
                interpreter = Some(base);
            }
            i += 1;
            continue;
        }
        if matches!(base, "sh" | "bash" | "zsh") {
            // `sh -c 'sleep 1; exec server --flag'`: what the script runs last.
            if let Some(script) = words.get(i + 2).filter(|_| words.get(i + 1) == Some(&"-c")) {
                let last = script.rsplit([';', '&']).next().unwrap_or(script);
                let inner: Vec<String> = last.split_whitespace().map(str::to_owned).collect();
                if let Some((p, a)) = inner.split_first() {
                    return command_label(p, a);
                }
            }
            i += 1;
            continue;
        }
        if word == "run" && i > 0 {
            i += 1;
            continue;
        }
        if word.starts_with('-') {
            // `python3 -c 'code'`, `node -e 'code'`: inline code has no name; the
            // interpreter is the name.
            if let (Some(interpreter), "-c" | "-e" | "--eval") = (interpreter, word) {
                return interpreter.to_owned();
            }
            // `python3 -m module`: the module is the name.
            if matches!(word, "-m" | "--from" | "--package" | "-p") {
                if let Some(next) = words.get(i + 1) {
                    return (*next).to_owned();
                }
            }
            // Options whose value is not what runs.
            let skip_value = matches!(word, "--with" | "--python" | "--directory" | "--env-file");
            i += if skip_value { 2 } else { 1 };
            continue;
        }
        return if word.starts_with('@') {
            word.to_owned()
        } else {
            base.to_owned()
        };
    }
    program.rsplit('/').next().unwrap_or(program).to_owned()
}

/// The bundled `mcp-echo-server`: beside this executable (installed together, or in the same
/// `target/<profile>` directory), or one directory up (a test binary in `target/<profile>/deps`).
pub fn bundled_server() -> Result<Target, TargetError> {
    let exe = std::env::current_exe().map_err(TargetError::NoExe)?;
    let dir = exe.parent().unwrap_or(Path::new("."));
    let candidates = [
        dir.join("mcp-echo-server"),
        dir.join("..").join("mcp-echo-server"),
    ];
    let found = candidates
        .iter()
        .find(|p| p.is_file())
        .ok_or_else(|| TargetError::NoBundled(exe.clone()))?;
    let mut target = Target::new("mcp-echo-server", ServerCommand::new(found));
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
    #[serde(default)]
    headers: BTreeMap<String, String>,
}

/// Reads the stdio servers of a host config file; `only` picks one by name.
pub fn from_config(path: &Path, only: Option<&str>) -> Result<Vec<Target>, TargetError> {
    let text = std::fs::read_to_string(path).map_err(|source| TargetError::Read {
        path: path.to_owned(),
        source,
    })?;
    let file: ConfigFile =
        serde_json::from_str(&text).map_err(|source| TargetError::NotAConfig {
            path: path.to_owned(),
            source,
        })?;
    if let Some(name) = only {
        if !file.mcp_servers.contains_key(name) {
            let names: Vec<&str> = file.mcp_servers.keys().map(String::as_str).collect();
            return Err(TargetError::NoSuchServer {
                name: name.to_owned(),
                path: path.to_owned(),
                declared: names.join(", "),
            });
        }
    }
    let mut targets = Vec::new();
    for (name, entry) in file.mcp_servers {
        if only.is_some_and(|o| o != name) {
            continue;
        }
        let sse = entry.kind.as_deref() == Some("sse");
        let http = entry.url.is_some()
            || matches!(entry.kind.as_deref(), Some("http" | "streamable-http"));
        let program = entry.command.as_deref().map(expand).unwrap_or_default();
        let args = entry.args.iter().map(|a| expand(a));
        let env: Vec<(String, String)> = entry
            .env
            .iter()
            .map(|(k, v)| (k.clone(), expand(v)))
            .collect();
        let mut target = Target::new(name.clone(), ServerCommand::new(program).args(args))
            .with(&env, entry.cwd.as_deref());
        if sse {
            target.skip = Some(format!(
                "HTTP+SSE server ({}): the deprecated 2024-11-05 transport is not tested, only \
                 Streamable HTTP",
                entry.url.as_deref().unwrap_or("no url")
            ));
        } else if http {
            let Some(url) = entry.url.as_deref().map(expand) else {
                return Err(TargetError::NoUrl {
                    name,
                    path: path.to_owned(),
                });
            };
            let mut endpoint = Endpoint::new(url);
            for (k, v) in &entry.headers {
                let (k, v) = parse_header(&format!("{k}:{}", expand(v))).map_err(|source| {
                    TargetError::Header {
                        name: name.clone(),
                        path: path.to_owned(),
                        source,
                    }
                })?;
                endpoint.headers.push((k, v));
            }
            target = Target::new(name.clone(), ServerCommand::new(""));
            target.http = Some(Arc::new(endpoint));
        } else if entry.command.is_none() {
            return Err(TargetError::NoCommand {
                name,
                path: path.to_owned(),
            });
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

/// An `--env` that is not `KEY=VALUE`: what was given.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("--env expects KEY=VALUE, got {0:?}")]
pub struct EnvError(String);

/// Parses `K=V` for `--env`.
pub fn parse_env(kv: &str) -> Result<(String, String), EnvError> {
    match kv.split_once('=') {
        Some((k, v)) if !k.is_empty() => Ok((k.to_owned(), v.to_owned())),
        _ => Err(EnvError(kv.to_owned())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_are_named_after_what_they_run() {
        let name = |cmd: &str| {
            let words: Vec<String> = cmd.split(' ').map(str::to_owned).collect();
            command_label(&words[0], &words[1..])
        };
        assert_eq!(
            name("npx -y @modelcontextprotocol/server-everything"),
            "@modelcontextprotocol/server-everything"
        );
        assert_eq!(
            name("env FOO=1 BAR=2 node dist/index.js --stdio"),
            "index.js"
        );
        assert_eq!(
            name("python3 -S tests/fixtures/broken_server.py --bug x"),
            "broken_server.py"
        );
        assert_eq!(name("python3 -m mcp_server_fetch"), "mcp_server_fetch");
        assert_eq!(name("uvx mcp-server-git --repository ."), "mcp-server-git");
        assert_eq!(name("uv run --with mcp server.py"), "server.py");
        let inline = vec!["-c".to_owned(), "print(1)".to_owned()];
        assert_eq!(command_label("python3", &inline), "python3");
        let inline = vec!["-e".to_owned(), "x()".to_owned()];
        assert_eq!(command_label("/usr/bin/node", &inline), "node");
        assert_eq!(
            name("/usr/local/bin/mcp-echo-server --log-level debug"),
            "mcp-echo-server"
        );
        let sh = vec![
            "-c".to_owned(),
            "sleep 6; exec python3 /x/srv.py".to_owned(),
        ];
        assert_eq!(command_label("sh", &sh), "srv.py");
    }

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
                "remote": {"type": "http", "url": "https://example.invalid/mcp", "headers": {"Authorization": "Bearer x"}},
                "old": {"type": "sse", "url": "https://example.invalid/sse"},
                "bare": {"command": "node", "args": ["s.js"]}
            }}"#,
        )
        .unwrap();
        let all = from_config(&path, None).unwrap();
        assert_eq!(all.len(), 4);
        let echo = all.iter().find(|t| t.name == "echo").unwrap();
        assert_eq!(echo.display(), "mcp-echo-server --log-level debug");
        let env: Vec<_> = echo.command.get_envs().collect();
        assert_eq!(
            env,
            [(std::ffi::OsStr::new("K"), std::ffi::OsStr::new("V"))]
        );
        let remote = all.iter().find(|t| t.name == "remote").unwrap();
        assert!(remote.skip.is_none());
        let endpoint = remote.http.as_deref().unwrap();
        assert_eq!(endpoint.url, "https://example.invalid/mcp");
        assert_eq!(endpoint.redacted_headers(), ["Authorization: <redacted>"]);
        assert_eq!(remote.display(), "https://example.invalid/mcp");
        assert!(all.iter().find(|t| t.name == "old").unwrap().skip.is_some());
        assert_eq!(from_config(&path, Some("bare")).unwrap().len(), 1);
        assert!(from_config(&path, Some("nope"))
            .unwrap_err()
            .to_string()
            .contains("echo"));
        std::fs::write(&path, "{}").unwrap();
        assert!(from_config(&path, None)
            .unwrap_err()
            .to_string()
            .contains("mcpServers"));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
