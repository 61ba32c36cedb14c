//! What to spawn: a server command line, its environment and working directory.

use std::ffi::{OsStr, OsString};
use std::path::PathBuf;

/// Where the server's stderr goes. It never mixes with frames: those are on stdout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StderrMode {
    /// Read line by line into `tracing` (target `mcp::stderr`, level INFO), and keep the last
    /// lines for error messages when the server dies.
    #[default]
    Capture,
    /// Passed through to this process's stderr.
    Inherit,
    /// Discarded.
    Discard,
}

/// A stdio MCP server to spawn, as a host config declares one (`command`, `args`, `env`).
#[derive(Debug, Clone)]
pub struct ServerCommand {
    pub(crate) program: OsString,
    pub(crate) args: Vec<OsString>,
    pub(crate) env: Vec<(OsString, OsString)>,
    pub(crate) env_clear: bool,
    pub(crate) cwd: Option<PathBuf>,
    pub(crate) stderr: StderrMode,
}

impl ServerCommand {
    pub fn new(program: impl AsRef<OsStr>) -> Self {
        ServerCommand {
            program: program.as_ref().to_owned(),
            args: Vec::new(),
            env: Vec::new(),
            env_clear: false,
            cwd: None,
            stderr: StderrMode::default(),
        }
    }

    pub fn arg(mut self, arg: impl AsRef<OsStr>) -> Self {
        self.args.push(arg.as_ref().to_owned());
        self
    }

    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.args
            .extend(args.into_iter().map(|a| a.as_ref().to_owned()));
        self
    }

    pub fn env(mut self, key: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> Self {
        self.env
            .push((key.as_ref().to_owned(), value.as_ref().to_owned()));
        self
    }

    /// Start from an empty environment (as some hosts do) instead of inheriting this one.
    pub fn env_clear(mut self) -> Self {
        self.env_clear = true;
        self
    }

    pub fn current_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.cwd = Some(dir.into());
        self
    }

    pub fn stderr(mut self, mode: StderrMode) -> Self {
        self.stderr = mode;
        self
    }

    /// The program, as given.
    pub fn get_program(&self) -> &OsStr {
        &self.program
    }

    /// The environment variables set for the server, in the order given.
    pub fn get_envs(&self) -> impl Iterator<Item = (&OsStr, &OsStr)> {
        self.env.iter().map(|(k, v)| (k.as_os_str(), v.as_os_str()))
    }

    /// The program, its arguments, environment and working directory as a
    /// [`std::process::Command`]; stdio, stderr mode and process group are the spawner's.
    pub fn to_command(&self) -> std::process::Command {
        let mut cmd = std::process::Command::new(&self.program);
        cmd.args(&self.args);
        if self.env_clear {
            cmd.env_clear();
        }
        cmd.envs(self.env.iter().map(|(k, v)| (k, v)));
        if let Some(dir) = &self.cwd {
            cmd.current_dir(dir);
        }
        cmd
    }

    /// The command line, for messages.
    pub fn display(&self) -> String {
        std::iter::once(&self.program)
            .chain(&self.args)
            .map(|a| a.to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join(" ")
    }
}
