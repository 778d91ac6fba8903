//! `GET /api/relays`: this relay's links and the relays the directory publishes.

use crate::{round, Clock};
use directory::TrackedRelay;
use relay::{LinkKind, LinkView};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// One relay link or crossfeed target.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct Link {
    /// `relay` or `crossfeed`.
    pub kind: String,
    /// Its configured name (`host:port`).
    pub name: String,
    /// The address in use; `null` while the name does not resolve.
    pub address: Option<String>,
    /// Datagrams sent to it.
    pub datagrams_out: u64,
    /// Bytes sent to it.
    pub bytes_out: u64,
    /// Datagrams accepted from it.
    pub datagrams_in: u64,
    /// Bytes accepted from it.
    pub bytes_in: u64,
    /// When a datagram from it was last accepted, Unix seconds; `null` if never.
    pub last_in: Option<u64>,
}

/// This process's relay.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct RelayInfo {
    /// The relay's name (telnet header, fgms `server.name`).
    pub name: String,
    /// Hub mode: relay traffic is passed on to the other relays.
    pub hub: bool,
    /// Relay links, then crossfeed targets.
    pub links: Vec<Link>,
    /// Distance-tiered forwarding: the tiers and what they left out.
    pub thinning: Thinning,
}

/// Distance-tiered forwarding on this relay since it started.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Thinning {
    /// The tiers as `[relay] tiers` writes them (`off`: every datagram to every
    /// pilot in range, as fgms).
    pub tiers: String,
    /// Datagrams the relay sent (to pilots, links and crossfeeds, and pongs).
    pub sent_datagrams: u64,
    /// Bytes the relay sent.
    pub sent_bytes: u64,
    /// Per tier, nearest first (empty when the tiers are off).
    pub per_tier: Vec<TierCount>,
}

/// One tier and what it left out.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct TierCount {
    /// The tier's outer bound, nautical miles; `null` for the last (every distance beyond).
    pub up_to_nm: Option<f64>,
    /// Datagrams per second a pilot is sent of each pilot in this tier; `null`: the sender's full rate.
    pub rate_hz: Option<f64>,
    /// Position datagrams not sent to pilots in this tier.
    pub thinned_datagrams: u64,
    /// Their bytes.
    pub thinned_bytes: u64,
}

/// The API form of a relay's tiers and counters.
pub fn thinning(tiers: &relay::Tiers, stats: &relay::Stats) -> Thinning {
    use std::sync::atomic::Ordering::Relaxed;
    let counts = stats.thinned();
    Thinning {
        tiers: tiers.to_string(),
        sent_datagrams: stats.packets_out.load(Relaxed),
        sent_bytes: stats.bytes_out.load(Relaxed),
        per_tier: tiers
            .tiers()
            .iter()
            .zip(counts)
            .map(|(t, (d, b))| TierCount {
                up_to_nm: t.up_to_nm.is_finite().then_some(t.up_to_nm),
                rate_hz: (t.interval_s > 0.0).then(|| round(1.0 / t.interval_s, 3)),
                thinned_datagrams: d,
                thinned_bytes: b,
            })
            .collect(),
    }
}

/// One relay the directory publishes, and its health.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Published {
    /// Display name (TXT `name`).
    pub name: String,
    /// SRV target.
    pub host: String,
    /// UDP port (the configured one, also while DNS publishes 0 for a relay that is down).
    pub port: u16,
    /// Whether DNS publishes it as up now.
    pub up: bool,
    /// The last probe's round trip, milliseconds; `null` when it went unanswered.
    pub rtt_ms: Option<f64>,
    /// When `up` last changed, Unix seconds; `null` before the first probe.
    pub since: Option<u64>,
}

/// The body of `GET /api/relays`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct RelaysBody {
    /// When the snapshot was taken, Unix seconds.
    pub generated_at: u64,
    /// This process's relay; `null` when none runs here.
    pub relay: Option<RelayInfo>,
    /// The directory's relays; empty when no directory runs here.
    pub published: Vec<Published>,
}

/// The API form of one link. `name` is the configured name when the caller knows
/// it (it resolved to `v.addr`), else the engine's label.
pub fn link(v: &LinkView, clock: &Clock) -> Link {
    Link {
        kind: match v.kind {
            LinkKind::Relay => "relay",
            LinkKind::Crossfeed => "crossfeed",
        }
        .to_string(),
        name: v.label.clone(),
        address: Some(v.addr.to_string()),
        datagrams_out: v.counters.datagrams_out,
        bytes_out: v.counters.bytes_out,
        datagrams_in: v.counters.datagrams_in,
        bytes_in: v.counters.bytes_in,
        last_in: v.counters.last_in.map(|t| clock.unix_secs(t)),
    }
}

/// A configured peer whose name has not resolved yet: no address, no traffic.
pub fn unresolved(kind: LinkKind, name: &str) -> Link {
    Link {
        kind: match kind {
            LinkKind::Relay => "relay",
            LinkKind::Crossfeed => "crossfeed",
        }
        .to_string(),
        name: name.to_string(),
        address: None,
        datagrams_out: 0,
        bytes_out: 0,
        datagrams_in: 0,
        bytes_in: 0,
        last_in: None,
    }
}

/// The API form of one published relay.
pub fn published(t: &TrackedRelay, clock: &Clock) -> Published {
    let r = t.relay();
    Published {
        name: r.name.clone(),
        host: r.host.to_string(),
        port: r.port,
        up: r.up,
        rtt_ms: t.last_rtt().map(|d| round(d.as_secs_f64() * 1000.0, 3)),
        since: t.since().map(|s| clock.unix_secs(s)),
    }
}
