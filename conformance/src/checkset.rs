//! Check sets: `--check-set VERSION` runs only the checks a given harness version had, so an
//! upgrade never turns a passing CI run red unless its owner moves the pin.
//!
//! Every check records the harness version that added it ([`crate::CheckInfo::since`]); a
//! check newer than the pin is skipped, and says which version added it.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// A harness version, `MAJOR.MINOR.PATCH`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Version {
    major: u32,
    minor: u32,
    patch: u32,
}

/// Why a `--check-set` value cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CheckSetError {
    #[error("{0:?} is not a version: write MAJOR.MINOR.PATCH, e.g. 0.1.0")]
    Malformed(String),
    #[error(
        "this harness is {current}; it does not know check set {asked} (upgrade the harness, \
         or pin {current} or older)"
    )]
    Newer { asked: Version, current: Version },
}

impl Version {
    /// The first release: the version of every check that names none.
    pub const FIRST: Version = Version {
        major: 0,
        minor: 1,
        patch: 0,
    };

    /// This harness's version (its own check set).
    pub fn current() -> Version {
        env!("CARGO_PKG_VERSION").parse().unwrap_or(Version::FIRST)
    }
}

impl Default for Version {
    fn default() -> Version {
        Version::FIRST
    }
}

impl FromStr for Version {
    type Err = CheckSetError;

    /// `0.1.0`, or `0.1` (patch 0); a leading `v` is allowed, as in a release tag.
    fn from_str(text: &str) -> Result<Version, CheckSetError> {
        let malformed = || CheckSetError::Malformed(text.to_owned());
        let bare = text.trim().strip_prefix('v').unwrap_or(text.trim());
        let parts: Vec<&str> = bare.split('.').collect();
        if !(2..=3).contains(&parts.len()) {
            return Err(malformed());
        }
        let number = |i: usize| -> Result<u32, CheckSetError> {
            match parts.get(i) {
                None => Ok(0),
                Some(p) if !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()) => {
                    p.parse().map_err(|_| malformed())
                }
                Some(_) => Err(malformed()),
            }
        };
        Ok(Version {
            major: number(0)?,
            minor: number(1)?,
            patch: number(2)?,
        })
    }
}

impl TryFrom<String> for Version {
    type Error = CheckSetError;

    fn try_from(text: String) -> Result<Version, CheckSetError> {
        text.parse()
    }
}

impl From<Version> for String {
    fn from(v: Version) -> String {
        v.to_string()
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

/// `--check-set VERSION`: a version this harness knows (its own or older).
pub fn parse_pin(text: &str) -> Result<Version, CheckSetError> {
    let asked: Version = text.parse()?;
    let current = Version::current();
    if asked > current {
        return Err(CheckSetError::Newer { asked, current });
    }
    Ok(asked)
}

/// Why a check added in `since` does not run under the pin, or `None` if it does.
pub fn left_out(since: Version, pin: Option<Version>) -> Option<String> {
    let pin = pin?;
    (since > pin).then(|| {
        format!(
            "added in {since}, after the pinned check set {pin}: move --check-set to {since} or \
             later to run it"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(text: &str) -> Version {
        text.parse().expect("a version")
    }

    #[test]
    fn versions_parse_and_order() {
        assert_eq!(v("0.1.0").to_string(), "0.1.0");
        assert_eq!(v("v0.2"), v("0.2.0"));
        assert!(v("0.10.0") > v("0.9.3"));
        assert!(v("1.0.0") > v("0.99.99"));
        for bad in ["", "1", "1.2.3.4", "a.b", "1..2", "1.-2.0", "1.2.x"] {
            assert_eq!(
                bad.parse::<Version>(),
                Err(CheckSetError::Malformed(bad.to_owned())),
                "{bad}"
            );
        }
    }

    #[test]
    fn a_pin_newer_than_the_harness_is_refused() {
        let current = Version::current();
        assert_eq!(parse_pin(&current.to_string()), Ok(current));
        assert_eq!(parse_pin("0.0.1"), Ok(v("0.0.1")));
        let later = Version {
            major: current.major + 1,
            ..current
        };
        assert_eq!(
            parse_pin(&later.to_string()),
            Err(CheckSetError::Newer {
                asked: later,
                current
            })
        );
    }

    #[test]
    fn checks_newer_than_the_pin_are_left_out() {
        assert_eq!(left_out(v("0.2.0"), None), None);
        assert_eq!(left_out(v("0.2.0"), Some(v("0.2.0"))), None);
        assert_eq!(left_out(v("0.1.0"), Some(v("0.2.0"))), None);
        assert_eq!(
            left_out(v("0.2.0"), Some(v("0.1.5"))).as_deref(),
            Some(
                "added in 0.2.0, after the pinned check set 0.1.5: move --check-set to 0.2.0 or \
                 later to run it"
            )
        );
    }
}
