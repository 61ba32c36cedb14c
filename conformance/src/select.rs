//! Which checks run against a target, and how a FAIL is read: `--only`/`--skip` patterns,
//! checks that do not apply to the server's eras or capabilities, and expected failures.

use std::path::{Path, PathBuf};

use mcp_protocol::mcp::ProtocolVersion;

use crate::catalog::Check;
use crate::check::{Profile, RunsIn};
use crate::config::RunConfig;
use crate::era::{Era, EraReport};

/// Does `id` match `pattern`? `*` matches any run of characters; a pattern without `*`
/// matches the id itself or everything under it (`lifecycle` matches `lifecycle.ping`).
pub fn id_matches(pattern: &str, id: &str) -> bool {
    if !pattern.contains('*') {
        return id == pattern || id.starts_with(&format!("{pattern}."));
    }
    let parts: Vec<&str> = pattern.split('*').collect();
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !id.starts_with(first) || id.len() < first.len() + last.len() || !id.ends_with(last) {
        return false;
    }
    let mut rest = &id[first.len()..id.len() - last.len()];
    for part in &parts[1..parts.len() - 1] {
        match rest.find(part) {
            Some(i) => rest = &rest[i + part.len()..],
            None => return false,
        }
    }
    true
}

/// The checks a profile runs, after `--only` and `--skip`.
pub fn select<'a>(checks: &'a [Check], config: &RunConfig) -> Vec<&'a Check> {
    checks
        .iter()
        .filter(|c| !c.info.echo_only || config.profile == Profile::Echo)
        .filter(|c| config.only.is_empty() || config.only.iter().any(|p| id_matches(p, &c.info.id)))
        .filter(|c| !config.skip.iter().any(|p| id_matches(p, &c.info.id)))
        .collect()
}

/// Why a baseline (`--expected-failures`) cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum BaselineError {
    #[error("cannot read {}: {source}", .path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("line {line}: unknown check id {id:?} (see mcp-conformance --list)")]
    UnknownId { line: usize, id: String },
    /// An error of the file at `path`.
    #[error("{}: {source}", .path.display())]
    In {
        path: PathBuf,
        source: Box<BaselineError>,
    },
}

/// `--expected-failures FILE`: one check id per line, optionally `TARGET:` before it, then the
/// reason; `#` starts a comment.
#[derive(Debug, Clone, Default)]
pub struct ExpectedFailures {
    entries: Vec<(Option<String>, String, String)>,
}

impl ExpectedFailures {
    pub fn load(path: &Path, known: &[Check]) -> Result<ExpectedFailures, BaselineError> {
        let text = std::fs::read_to_string(path).map_err(|source| BaselineError::Read {
            path: path.to_owned(),
            source,
        })?;
        Self::parse(&text, known).map_err(|e| BaselineError::In {
            path: path.to_owned(),
            source: Box::new(e),
        })
    }

    pub fn parse(text: &str, known: &[Check]) -> Result<ExpectedFailures, BaselineError> {
        let mut entries = Vec::new();
        for (n, line) in text.lines().enumerate() {
            let line = line.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let (key, reason) = line
                .split_once(char::is_whitespace)
                .map(|(k, r)| (k, r.trim()))
                .unwrap_or((line, ""));
            let (target, id) = match key.split_once(':') {
                Some((t, id)) => (Some(t.to_owned()), id),
                None => (None, key),
            };
            if !known.iter().any(|c| c.info.id == id) {
                return Err(BaselineError::UnknownId {
                    line: n + 1,
                    id: id.to_owned(),
                });
            }
            entries.push((target, id.to_owned(), reason.to_owned()));
        }
        Ok(ExpectedFailures { entries })
    }

    /// Is `id` listed for a target known by any of `names`?
    pub(crate) fn listed(&self, names: &[&str], id: &str) -> bool {
        self.entries
            .iter()
            .any(|(t, i, _)| i == id && t.as_deref().is_none_or(|t| names.contains(&t)))
    }
}

/// Why a check does not apply to a server of these eras, or `None` if it does.
pub fn not_applicable(check: &Check, era: &EraReport) -> Option<String> {
    let version = ProtocolVersion::LATEST.as_str();
    if check.info.runs_in == RunsIn::Startup {
        return None;
    }
    if check.needs.modern && !era.accepts_latest {
        return Some(match era.label() {
            "legacy" => format!("the server does not speak {version} (legacy only)"),
            "neither" => {
                format!("the server does not speak {version} (era.detect found neither era)")
            }
            _ => format!(
                "the server does not speak {version} (it is modern but supports {})",
                if era.supported.is_empty() {
                    "no version it names".to_owned()
                } else {
                    era.supported.join(", ")
                }
            ),
        });
    }
    if check.needs.legacy && !era.legacy {
        return Some(if era.modern {
            "the server speaks only the modern era (no initialize); this check needs a legacy \
             session"
                .to_owned()
        } else {
            "initialize got no result (era.detect); this check needs a legacy session".to_owned()
        });
    }
    if let Some((capability, in_era)) = check.needs.capability {
        if !era.declares(capability, in_era) {
            let from = match in_era {
                Era::Modern => "server/discover",
                Era::Legacy => "initialize",
            };
            return Some(format!(
                "the server does not declare the {capability} capability (its {from} result has \
                 no capabilities.{capability})"
            ));
        }
    }
    None
}
