//! The master engine's validated settings.

use ipnet::IpNet;
use std::net::SocketAddr;
use std::time::Duration;
use xash::filter::Version;

/// One admin allowed to send commands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AdminUser {
    /// Name, for logs.
    pub name: String,
    /// Shared secret; never sent on the wire (only a keyed hash of it).
    pub password: String,
}

/// Everything the engine decides with.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// A server is dropped this long after its last valid info (default 900 s,
    /// three times the engine's 300 s heartbeat interval).
    pub server_ttl: Duration,
    /// Challenge window; a challenge is valid in its window and the next one.
    pub challenge_window: Duration,
    /// Servers per source: per IPv4 address, per IPv6 /64 (exactly this many fit).
    pub max_servers_per_source: usize,
    /// Servers in all.
    pub max_servers: usize,
    /// Servers reporting an older `version` are refused.
    pub min_server_version: Version,
    /// Clients with an older `clver` get the "please update" entry.
    pub client_min_version: Version,
    /// Minimum `buildnum` for clients with clver >= 0.20 (0 = off).
    pub min_engine_buildnum: u32,
    /// Minimum `buildnum` for clients with clver < 0.20 (0 = off).
    pub min_old_engine_buildnum: u32,
    /// Treat a scan without `clver` as an outdated engine (xash3d-master's rule).
    /// Off by default: tools such as qstat send no `clver` and should get the list.
    pub require_clver: bool,
    /// Address listed to outdated IPv4 clients (default: the master's own address).
    pub update_addr_v4: Option<SocketAddr>,
    /// Address listed to outdated IPv6 clients.
    pub update_addr_v6: Option<SocketAddr>,
    /// Host name in the fake `info` reply to outdated clients.
    pub update_title: String,
    /// Map in the fake `info` reply.
    pub update_map: String,
    /// Largest server-list datagram (default 1400: no IP fragmentation).
    pub page_size: usize,
    /// Requests a client may send in a burst before being throttled.
    pub rate_burst: f64,
    /// One request of allowance comes back per this long.
    pub rate_decay: Duration,
    /// Sources each per-source table tracks (requests, heartbeats, reply bytes, NAT
    /// announces): fixed memory; when a table is full a new source evicts the entry that
    /// owes least, in constant time.
    pub rate_table_size: usize,
    /// Bytes of replies (list pages, info replies) one client (IPv4 address or IPv6 /64)
    /// may be sent per second, with a burst of one second's worth; a reply larger than
    /// that is sent once the client owes nothing. Bounds what a spoofed scan flood can
    /// direct at a victim. Default 65,536: one full 10,000-server IPv4 scan (60,792 bytes
    /// in 1,400-byte pages) per second. 0 = unlimited (benchmarks).
    pub scan_reply_bytes_per_sec: u64,
    /// NAT servers one client may be announced to per second (`c <client>` datagrams
    /// the master sends on its behalf); a scan listing more announces the next ones in
    /// turn. 0 = unlimited.
    pub nat_announces_per_sec: u32,
    /// Admins.
    pub admins: Vec<AdminUser>,
    /// Admin hash length in bytes.
    pub hash_len: usize,
    /// Admin hash key (xash3d-master default "Half-Life").
    pub hash_key: String,
    /// Admin hash personalisation (xash3d-master default "Freeman").
    pub hash_personal: String,
    /// An IPv4 address or IPv6 /64 that sent a bad admin hash (with a valid challenge)
    /// is ignored this long.
    pub admin_lockout: Duration,
    /// Source networks admin messages are accepted from (default loopback only);
    /// anything else is dropped, counted and logged.
    pub admin_allow: Vec<IpNet>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            server_ttl: Duration::from_secs(900),
            challenge_window: Duration::from_secs(60),
            max_servers_per_source: 32,
            max_servers: 32_768,
            min_server_version: Version::new(0, 21, 0),
            client_min_version: Version::new(0, 21, 0),
            min_engine_buildnum: 0,
            min_old_engine_buildnum: 3500,
            require_clver: false,
            update_addr_v4: None,
            update_addr_v6: None,
            update_title: "https://github.com/FWGS/xash3d-fwgs".into(),
            update_map: "Update please".into(),
            page_size: 1400,
            rate_burst: 8.0,
            rate_decay: Duration::from_secs(1),
            rate_table_size: 65_536,
            scan_reply_bytes_per_sec: 65_536,
            nat_announces_per_sec: 32,
            admins: Vec::new(),
            hash_len: 64,
            hash_key: "Half-Life".into(),
            hash_personal: "Freeman".into(),
            admin_lockout: Duration::from_secs(10),
            admin_allow: vec![
                "127.0.0.0/8".parse().expect("valid network"),
                "::1/128".parse().expect("valid network"),
            ],
        }
    }
}

impl Config {
    /// Checks values the engine relies on; the message names the setting.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let min_page =
            xash::master::SERVER_LIST_HEADER.len() + xash::master::KEY_BLOCK_LEN + 18 * 2;
        if self.page_size < min_page || self.page_size > 65_000 {
            return Err(ConfigError::PageSize {
                min: min_page,
                got: self.page_size,
            });
        }
        if self.max_servers_per_source == 0 || self.max_servers == 0 {
            return Err(ConfigError::MaxServers);
        }
        if self.challenge_window.is_zero() || self.server_ttl.is_zero() {
            return Err(ConfigError::Durations);
        }
        if self.rate_burst < 1.0 || self.rate_decay.is_zero() || self.rate_table_size == 0 {
            return Err(ConfigError::Rate);
        }
        if !(1..=64).contains(&self.hash_len)
            || self.hash_key.len() > 64
            || self.hash_personal.len() > 16
        {
            return Err(ConfigError::Hash);
        }
        Ok(())
    }
}

/// Which setting [`Config::validate`] refused; the message names it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// `page_size` outside its bounds.
    #[error("page_size must be between {min} and 65000 bytes, got {got}")]
    PageSize {
        /// The smallest page that holds a header, the key block and two servers.
        min: usize,
        /// The configured size.
        got: usize,
    },
    /// A zero server cap.
    #[error("max_servers_per_source and max_servers must be at least 1")]
    MaxServers,
    /// A zero challenge window or server lifetime.
    #[error("challenge_window and server_ttl must be positive")]
    Durations,
    /// A rate limit that admits nothing.
    #[error("rate_burst must be >= 1, rate_decay and rate_table_size positive")]
    Rate,
    /// The hash length, key or personalisation out of BLAKE2b's bounds.
    #[error("hash_len must be 1-64, hash_key at most 64 bytes, hash_personal at most 16")]
    Hash,
}
