//! `[admin]`: the authenticated admin API on the HTTP listener, and the files it
//! names: the tokens file and the state file of run-time changes.
use crate::overlay::{canonical, Overlay};
use crate::tokens::{parse_tokens, Token};
use anyhow::{Context, Result};
use ipnet::IpNet;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The `[admin]` table: fgms's admin CLI as an authenticated HTTP API (`/api/admin/`),
/// off unless `tokens_file` is set.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct AdminSection {
    /// File of bearer tokens, one `NAME TOKEN` per line (`#` comments); the name is
    /// who made a change in the logs. Empty: no admin API.
    pub tokens_file: String,
    /// Source networks allowed to use the admin API (IPs or CIDRs).
    pub allow: Vec<String>,
    /// Where run-time changes of the lists are kept across restarts (JSON, written
    /// atomically at every change); empty: they last until the process stops.
    pub state_file: String,
    /// Run-time changes held at most (one per entry); past it a change is refused
    /// until they are written into this file.
    pub max_changes: usize,
}

impl Default for AdminSection {
    fn default() -> Self {
        AdminSection {
            tokens_file: String::new(),
            allow: vec!["127.0.0.0/8".into(), "::1/128".into()],
            state_file: "lobby-admin.json".into(),
            max_changes: 4096,
        }
    }
}

/// Who may use the admin API, as `[admin]` names it.
#[derive(Debug, Clone, Default)]
pub struct Access {
    /// The tokens; empty: the admin API is off.
    pub tokens: Vec<Token>,
    /// Source networks allowed.
    pub allow: Vec<IpNet>,
    /// The tokens file can be read by others than its owner and group (the caller
    /// warns: `chmod o-rwx` it).
    pub readable_by_others: bool,
}

impl AdminSection {
    /// Reads the allowed networks and the tokens file (none configured: the API is
    /// off). Errors name the setting and the file.
    pub fn read_access(&self) -> Result<Access> {
        let allow = self
            .allow
            .iter()
            .map(|a| crate::net(a).context("admin.allow"))
            .collect::<Result<Vec<_>>>()?;
        if self.tokens_file.is_empty() {
            return Ok(Access {
                allow,
                ..Access::default()
            });
        }
        let path = Path::new(&self.tokens_file);
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read admin.tokens_file {}", path.display()))?;
        let tokens = parse_tokens(&text, &path.display().to_string())?;
        let readable_by_others = {
            use std::os::unix::fs::PermissionsExt;
            std::fs::metadata(path).is_ok_and(|m| m.permissions().mode() & 0o007 != 0)
        };
        Ok(Access {
            tokens,
            allow,
            readable_by_others,
        })
    }

    /// The saved run-time changes and where they are kept: none while the API is
    /// off (`on` false: they apply only with it on), none yet when the file does not
    /// exist. Each entry is read back in its canonical spelling.
    pub fn read_changes(&self, on: bool) -> Result<(Option<PathBuf>, Overlay)> {
        let state_file =
            (on && !self.state_file.is_empty()).then(|| PathBuf::from(&self.state_file));
        let Some(p) = &state_file else {
            return Ok((None, Overlay::default()));
        };
        let overlay = match std::fs::read_to_string(p) {
            Ok(text) => {
                let mut o = Overlay::from_json(&text)
                    .map_err(anyhow::Error::msg)
                    .with_context(|| format!("admin.state_file {}", p.display()))?;
                for c in &mut o.changes {
                    c.value = canonical(c.list, &c.value);
                }
                o
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Overlay::default(),
            Err(e) => {
                return Err(e)
                    .with_context(|| format!("cannot read admin.state_file {}", p.display()))
            }
        };
        Ok((state_file, overlay))
    }
}
