//! `GET /healthz` and `GET /readyz`.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// The body of `GET /healthz`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct HealthBody {
    /// Always `ok`: the process answers.
    pub status: String,
}

/// One part's readiness.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct PartStatus {
    /// `relay`, `master`, `dns`, `sim` or `http`.
    pub part: String,
    /// Whether it serves.
    pub ready: bool,
    /// What it waits for when not ready; `null` when ready.
    pub detail: Option<String>,
}

/// The body of `GET /readyz` (200 when `ready`, else 503).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct ReadyBody {
    /// Whether every part configured in this process serves.
    pub ready: bool,
    /// Every configured part, in start order.
    pub parts: Vec<PartStatus>,
}

impl ReadyBody {
    /// The body for `parts`.
    pub fn of(parts: Vec<PartStatus>) -> ReadyBody {
        ReadyBody {
            ready: parts.iter().all(|p| p.ready),
            parts,
        }
    }
}
