//! `[relay]`: the FlightGear relay, its telnet list, peers and tracker link.
use crate::{listen_addr, net};
use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

pub use ::relay::peers::{Kind, PeerName};

/// The `[relay]` table.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct RelaySection {
    /// Name on the telnet list.
    pub name: String,
    /// UDP addresses to listen on (IPv4 and IPv6).
    pub listen: Vec<String>,
    /// TCP addresses for the telnet pilot list; empty disables it.
    pub telnet: Vec<String>,
    /// Telnet connections served at once, in total.
    pub telnet_max_connections: usize,
    /// Telnet connections served at once per source IPv4 address or IPv6 /64.
    pub telnet_max_per_ip: usize,
    /// Seconds a telnet client has to take the whole list (then it is closed).
    pub telnet_write_timeout: f64,
    /// Default receive range, nm.
    pub out_of_reach: f64,
    /// Largest range a client may request, nm.
    pub max_radar_range: f64,
    /// Seconds of silence before a pilot is dropped.
    pub player_expiry: f64,
    /// Seconds between LazyRelay datagrams per sender to relays with nobody in range.
    pub lazy_relay_interval: f64,
    /// Re-forward relay traffic to the other relays.
    pub hub: bool,
    /// Relays, `host:port`.
    pub relays: Vec<String>,
    /// Seconds between resolutions of relay and crossfeed host names (a name that
    /// does not resolve is retried sooner, from 1 s doubling to 60 s).
    pub peer_refresh: f64,
    /// Crossfeed targets, `host:port`.
    pub crossfeeds: Vec<String>,
    /// IPs or CIDRs allowed to send relay traffic without being relays.
    pub whitelist: Vec<String>,
    /// IPs or CIDRs whose traffic is dropped.
    pub blacklist: Vec<String>,
    /// Upper bound on pilots held.
    pub max_pilots: usize,
    /// Most local pilots per source IPv4 address or IPv6 /64.
    pub max_pilots_per_ip: usize,
    /// Most pilots arriving over one relay link.
    pub max_pilots_per_relay: usize,
    /// Bytes sent to a local pilot per byte received from it (the bound on what a
    /// spoofed source can make the relay send).
    pub reply_ratio: u32,
    /// Receive threads per listen address (SO_REUSEPORT); 0 = one per CPU core.
    pub workers: usize,
    /// SCHED_FIFO priority (1-99) for the UDP workers; 0 = normal scheduling.
    pub realtime_priority: u8,
    /// The tracker to report pilots to, `host:port` as fgms does (fgms.conf's
    /// `server.tracked`, `server.tracking_server`, `server.tracking_port`); empty: none.
    pub tracker: String,
    /// The host name sent in the tracker identification (fgms's `server.FQDN`; a
    /// tracker may admit relays by it); empty: the relay's `name`.
    pub tracker_fqdn: String,
    /// Tracker messages kept while the tracker is slow or away (the oldest kept,
    /// newer ones dropped and counted).
    pub tracker_max_queue: usize,
    /// File keeping the tracker's unsent messages across a restart (fgms's
    /// `queue_file`); empty: none.
    pub tracker_queue_file: String,
    /// A secret shared with a lobby tracker that lists this relay with one (sent
    /// first, where fgms sends an empty message; fgtracker ignores it); empty: none.
    pub tracker_secret: String,
    /// Distance-tiered forwarding: how often a pilot is sent the positions of
    /// pilots at each distance, nearest first, as text (`"full@10,2hz@40,1hz"`:
    /// every datagram within 10 nm, 2 Hz to 40 nm, 1 Hz beyond) or a list of such
    /// tiers (`["full@10", "2hz@40", "1hz"]`); `"off"` or `[]`: every datagram to
    /// every pilot in range, as fgms.
    pub tiers: TiersSetting,
    /// How far past a tier's bound (nm) a pair of pilots moving apart must be before
    /// it gets the farther tier's rate (moving closer it changes at once).
    pub tier_hysteresis: f64,
}

/// `[relay] tiers`: one string, or a list of tiers (`[]`: off).
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(untagged)]
pub enum TiersSetting {
    /// `"full@10,2hz@40,1hz"` or `"off"`.
    Text(String),
    /// `["full@10", "2hz@40", "1hz"]`; empty: off.
    List(Vec<String>),
}

impl TiersSetting {
    /// The tiers, checked.
    pub fn tiers(&self, hysteresis_nm: f64) -> Result<relay::Tiers> {
        let text = match self {
            TiersSetting::Text(t) => t.clone(),
            TiersSetting::List(l) if l.is_empty() => "off".into(),
            TiersSetting::List(l) => l.join(","),
        };
        relay::Tiers::parse(&text, hysteresis_nm).with_context(|| format!("relay.tiers {text:?}"))
    }
}

impl Default for RelaySection {
    fn default() -> Self {
        let d = relay::Config::default();
        RelaySection {
            name: d.name,
            listen: vec!["0.0.0.0:5000".into(), "[::]:5000".into()],
            telnet: vec!["0.0.0.0:5001".into(), "[::]:5001".into()],
            telnet_max_connections: 64,
            telnet_max_per_ip: 4,
            telnet_write_timeout: 10.0,
            out_of_reach: d.out_of_reach_nm,
            max_radar_range: d.max_radar_range_nm,
            player_expiry: d.player_expiry.as_secs_f64(),
            lazy_relay_interval: d.lazy_relay_interval.as_secs_f64(),
            hub: false,
            relays: vec![],
            peer_refresh: 300.0,
            crossfeeds: vec![],
            whitelist: vec![],
            blacklist: vec![],
            max_pilots: d.max_pilots,
            max_pilots_per_ip: d.max_pilots_per_ip,
            max_pilots_per_relay: d.max_pilots_per_relay,
            reply_ratio: d.reply_ratio,
            workers: 0,
            realtime_priority: 0,
            tracker: String::new(),
            tracker_fqdn: String::new(),
            tracker_max_queue: 10_000,
            tracker_queue_file: String::new(),
            tracker_secret: String::new(),
            tiers: TiersSetting::Text(d.tiers.to_string()),
            tier_hysteresis: d.tiers.hysteresis_nm,
        }
    }
}

fn secs(v: f64, key: &str) -> Result<Duration> {
    crate::seconds(v, &format!("relay.{key}"), 1e9)
}

impl RelaySection {
    /// The relay peers and crossfeed targets, checked for syntax only (names are
    /// resolved by the running relay, see `parts::peers`).
    pub fn peer_names(&self) -> Result<Vec<PeerName>> {
        let relays = self.relays.iter().map(|s| PeerName::parse(s, Kind::Relay));
        let feeds = self
            .crossfeeds
            .iter()
            .map(|s| PeerName::parse(s, Kind::Crossfeed));
        Ok(relays.chain(feeds).collect::<Result<_, _>>()?)
    }

    /// How often peer names are resolved again.
    pub fn peer_refresh(&self) -> Result<Duration> {
        secs(self.peer_refresh, "peer_refresh")
    }

    /// The engine configuration this section describes, values checked, without
    /// the relay peers and crossfeed targets ([`RelaySection::peer_names`]: the
    /// running relay adds them as their names resolve).
    pub fn engine_config(&self) -> Result<relay::Config> {
        self.peer_names()?;
        self.peer_refresh()?;
        for (key, v) in [
            ("out_of_reach", self.out_of_reach),
            ("max_radar_range", self.max_radar_range),
        ] {
            if !(v.is_finite() && v > 0.0) {
                bail!("relay.{key} must be a positive number of nautical miles, got {v}");
            }
        }
        if self.max_pilots == 0 {
            bail!("relay.max_pilots must be at least 1");
        }
        if self.max_pilots_per_ip == 0 {
            bail!("relay.max_pilots_per_ip must be at least 1");
        }
        if self.max_pilots_per_relay == 0 {
            bail!("relay.max_pilots_per_relay must be at least 1");
        }
        if self.reply_ratio == 0 {
            bail!("relay.reply_ratio must be at least 1");
        }
        Ok(relay::Config {
            name: self.name.clone(),
            out_of_reach_nm: self.out_of_reach,
            max_radar_range_nm: self.max_radar_range,
            player_expiry: secs(self.player_expiry, "player_expiry")?,
            lazy_relay_interval: secs(self.lazy_relay_interval, "lazy_relay_interval")?,
            relays: Vec::new(),
            hub: self.hub,
            crossfeeds: Vec::new(),
            whitelist: self
                .whitelist
                .iter()
                .map(|s| net(s))
                .collect::<Result<_>>()?,
            blacklist: self
                .blacklist
                .iter()
                .map(|s| net(s))
                .collect::<Result<_>>()?,
            max_pilots: self.max_pilots,
            max_pilots_per_ip: self.max_pilots_per_ip,
            max_pilots_per_relay: self.max_pilots_per_relay,
            reply_ratio: self.reply_ratio,
            tiers: self.tiers.tiers(self.tier_hysteresis)?,
        })
    }

    /// Worker threads per listen address.
    pub fn workers(&self) -> usize {
        match self.workers {
            0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
            n => n.min(64),
        }
    }

    /// The UDP listen addresses.
    pub fn listen_addrs(&self) -> Result<Vec<SocketAddr>> {
        if self.listen.is_empty() {
            bail!("relay.listen is empty: the relay needs at least one UDP address");
        }
        self.listen.iter().map(|s| listen_addr(s)).collect()
    }

    /// The telnet listen addresses (possibly none).
    pub fn telnet_addrs(&self) -> Result<Vec<SocketAddr>> {
        self.telnet.iter().map(|s| listen_addr(s)).collect()
    }

    /// The tracker link, if one is configured (syntax checked; the name is resolved
    /// by the running link, again at every connection attempt).
    pub fn tracker_options(&self) -> Result<Option<TrackerOptions>> {
        if self.tracker.is_empty() {
            return Ok(None);
        }
        let target = PeerName::parse(&self.tracker, Kind::Relay)
            .with_context(|| format!("relay.tracker {:?}", self.tracker))?;
        if self.tracker_max_queue == 0 {
            bail!("relay.tracker_max_queue must be at least 1");
        }
        let fqdn = if self.tracker_fqdn.is_empty() {
            self.name.clone()
        } else {
            self.tracker_fqdn.clone()
        };
        if fqdn.contains(char::is_whitespace) {
            bail!("relay.tracker_fqdn must be one word (it is a field of the identification line), got {fqdn:?}");
        }
        Ok(Some(TrackerOptions {
            target: target.text,
            fqdn,
            server_name: self.name.clone(),
            max_queue: self.tracker_max_queue,
            queue_file: (!self.tracker_queue_file.is_empty())
                .then(|| std::path::PathBuf::from(&self.tracker_queue_file)),
            secret: self.tracker_secret.clone(),
        }))
    }

    /// The telnet listener's addresses and limits.
    pub fn telnet_options(&self) -> Result<TelnetOptions> {
        for (key, v) in [
            ("telnet_max_connections", self.telnet_max_connections),
            ("telnet_max_per_ip", self.telnet_max_per_ip),
        ] {
            if v == 0 {
                bail!("relay.{key} must be at least 1 (an empty telnet list disables telnet)");
            }
        }
        Ok(TelnetOptions {
            addrs: self.telnet_addrs()?,
            max_connections: self.telnet_max_connections,
            max_per_ip: self.telnet_max_per_ip,
            write_timeout: crate::seconds(
                self.telnet_write_timeout,
                "relay.telnet_write_timeout",
                3600.0,
            )?,
        })
    }
}

/// The telnet listener's addresses and limits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TelnetOptions {
    /// TCP addresses; empty disables telnet.
    pub addrs: Vec<SocketAddr>,
    /// Connections served at once, in total.
    pub max_connections: usize,
    /// Connections served at once per source IPv4 address or IPv6 /64.
    pub max_per_ip: usize,
    /// How long a client has to take the whole list.
    pub write_timeout: Duration,
}

/// The relay peers and crossfeed targets by name, and how often names are resolved again.
#[derive(Debug, Clone)]
pub struct PeerOptions {
    /// Relays and crossfeed targets, `host:port`.
    pub names: Vec<PeerName>,
    /// Seconds between two resolutions of a name that resolves.
    pub refresh: Duration,
}

/// What `[relay] tracker*` configured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrackerOptions {
    /// `host:port` as configured (resolved at every attempt).
    pub target: String,
    /// Sent in the identification line.
    pub fqdn: String,
    /// The relay's name, sent in the identification line.
    pub server_name: String,
    /// Messages kept while the tracker is away.
    pub max_queue: usize,
    /// Where the backlog is kept across restarts.
    pub queue_file: Option<PathBuf>,
    /// A secret shared with a lobby tracker (sent in the first message, which
    /// fgtracker discards); empty: none.
    pub secret: String,
}
