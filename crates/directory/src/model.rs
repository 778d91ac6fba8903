//! The directory's model: the relays with their health, the scenery servers, and
//! every record derived from them (the zone, the records push mode owns,
//! `mpservers.xml`). The DNS server, the RFC 2136 push and the HTTP listener all
//! read this one type; none of them derives records on its own.
//!
//! Pure: no sockets, no clock. The caller sends the probes and hands the round
//! trips to [`Directory::record_probes`]; the one piece of IO construction may need
//! (resolving an external relay's address for probing) is a function it passes in.

use crate::health::Health;
use crate::stats::{Counter, Stats};
use crate::zone::{self, Relay, Scenery, Zone};
use crate::{mpservers_xml, terrasync, Error};
use hickory_proto::rr::{Name, Record};
use std::collections::BTreeMap;
use std::net::{IpAddr, SocketAddr};
use std::str::FromStr;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The zone's settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ZoneConfig {
    /// The zone, e.g. `fg.example.org` (the trailing dot is optional).
    pub origin: String,
    /// Name server name, relative to the zone unless it ends with a dot.
    pub ns: String,
    /// Addresses of the name server (A/AAAA when it lies in the zone).
    pub ns_addresses: Vec<IpAddr>,
    /// Responsible mailbox as a name, relative unless it ends with a dot.
    pub hostmaster: String,
    /// TTL of every record, seconds (0 is raised to 1).
    pub ttl: u32,
}

/// One relay to publish and probe.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RelayConfig {
    /// SRV target, relative to the zone unless it ends with a dot.
    pub host: String,
    /// A/AAAA records for `host` when it lies in the zone; the first is probed.
    pub addresses: Vec<IpAddr>,
    /// UDP port.
    pub port: u16,
    /// SRV priority.
    pub priority: u16,
    /// SRV weight.
    pub weight: u16,
    /// Display name (TXT `name`).
    pub name: String,
    /// Location (TXT `location`).
    pub location: String,
    /// Further TXT attributes.
    pub extra: BTreeMap<String, String>,
    /// Where PINGs go; `None` = the first address and `port`, else the host resolved.
    pub probe: Option<SocketAddr>,
}

/// Everything the directory is built from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// The zone.
    pub zone: ZoneConfig,
    /// The relays, in publishing order.
    pub relays: Vec<RelayConfig>,
    /// TerraSync / osm2city servers (a trailing `/` on a URL is dropped).
    pub scenery: Vec<Scenery>,
    /// Failed probes in a row before a relay is published as down.
    pub fall: u32,
    /// Successful probes in a row before it is published as up again.
    pub rise: u32,
}

/// A relay as the directory tracks it: what is published, and its health.
#[derive(Debug, Clone)]
pub struct TrackedRelay {
    relay: Relay,
    probe: Option<SocketAddr>,
    /// The host (and port) whose address is the probe target, when neither a
    /// probe address nor addresses are configured: resolved by the caller, again
    /// and again (see [`Directory::to_resolve`]).
    resolve: Option<(Name, u16)>,
    health: Health,
    last_rtt: Option<Duration>,
    /// When the published state last changed; `None` before the first probe round.
    since: Option<Instant>,
}

impl TrackedRelay {
    /// The published relay (its `up` follows the health).
    pub fn relay(&self) -> &Relay {
        &self.relay
    }

    /// Where PINGs go; `None` when no address is known (every probe fails).
    pub fn probe(&self) -> Option<SocketAddr> {
        self.probe
    }

    /// The up/down hysteresis.
    pub fn health(&self) -> &Health {
        &self.health
    }

    /// Round trip of the last probe, `None` when it went unanswered.
    pub fn last_rtt(&self) -> Option<Duration> {
        self.last_rtt
    }

    /// When its published state (up or down) last changed, or was first decided by
    /// a probe round; `None` before any probe.
    pub fn since(&self) -> Option<Instant> {
        self.since
    }
}

/// A relay whose published state changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transition {
    /// The relay's SRV target.
    pub host: Name,
    /// Whether it is now published as up.
    pub up: bool,
}

/// What a round of probes changed, ready to serve and push.
#[derive(Debug, Clone, PartialEq)]
pub struct ZoneUpdate {
    /// The new SOA serial.
    pub serial: u32,
    /// The relays whose state changed.
    pub transitions: Vec<Transition>,
    /// Every record of the zone now.
    pub records: Vec<Record>,
    /// The owned records before the change (what push deletes).
    pub owned_before: Vec<Record>,
    /// The owned records now (what push adds).
    pub owned: Vec<Record>,
}

/// Everything the directory publishes.
#[derive(Debug, Clone)]
pub struct Directory {
    zone: Zone,
    relays: Vec<TrackedRelay>,
    scenery: Vec<Scenery>,
    stats: Arc<Stats>,
}

fn origin_of(s: &str) -> Result<Name, Error> {
    let mut n = Name::from_str(s).map_err(|e| Error::InvalidName {
        what: "zone",
        name: s.to_string(),
        reason: e.to_string(),
    })?;
    n.set_fqdn(true);
    Ok(n)
}

fn zone_of(c: &ZoneConfig, serial: u32) -> Result<Zone, Error> {
    let origin = origin_of(&c.origin)?;
    Ok(Zone {
        ns: zone::name_in(&origin, &c.ns, "ns")?,
        ns_addresses: c.ns_addresses.clone(),
        hostmaster: zone::name_in(&origin, &c.hostmaster, "hostmaster")?,
        origin,
        ttl: c.ttl.max(1),
        serial,
    })
}

fn tracked(
    origin: &Name,
    c: &RelayConfig,
    health: &Health,
    resolve: &mut impl FnMut(&Name, u16) -> Option<SocketAddr>,
) -> Result<TrackedRelay, Error> {
    let host = zone::name_in(origin, &c.host, "relay host")?;
    crate::mpserver::encode_relay(&c.name, &c.location, &c.extra).map_err(|e| Error::Txt {
        host: c.host.clone(),
        source: e,
    })?;
    let configured = c
        .probe
        .or_else(|| c.addresses.first().map(|ip| SocketAddr::new(*ip, c.port)));
    let resolve_host = configured.is_none().then(|| (host.clone(), c.port));
    let probe = configured.or_else(|| resolve(&host, c.port));
    Ok(TrackedRelay {
        relay: Relay {
            host,
            addresses: c.addresses.clone(),
            port: c.port,
            priority: c.priority,
            weight: c.weight,
            name: c.name.clone(),
            location: c.location.clone(),
            extra: c.extra.clone(),
            up: false,
        },
        probe,
        resolve: resolve_host,
        health: health.clone(),
        last_rtt: None,
        since: None,
    })
}

fn scenery_of(s: &Scenery) -> Result<Scenery, Error> {
    terrasync::regexp_for(&s.url)?;
    zone::check_service(&s.service)?;
    Ok(Scenery {
        url: s.url.trim_end_matches('/').to_string(),
        ..s.clone()
    })
}

impl Directory {
    /// Validates `config` and builds the model with SOA serial `serial`. Every
    /// relay starts unprobed, published as down (SRV port 0) until its first good
    /// probe. `resolve(host, port)` is asked for
    /// the probe address of a relay that has neither a `probe` nor an address.
    pub fn new(
        config: &Config,
        serial: u32,
        mut resolve: impl FnMut(&Name, u16) -> Option<SocketAddr>,
    ) -> Result<Directory, Error> {
        let zone = zone_of(&config.zone, serial)?;
        let health = Health::new(config.fall, config.rise);
        let relays = config
            .relays
            .iter()
            .map(|r| tracked(&zone.origin, r, &health, &mut resolve))
            .collect::<Result<_, _>>()?;
        let scenery = config
            .scenery
            .iter()
            .map(scenery_of)
            .collect::<Result<_, _>>()?;
        let d = Directory {
            zone,
            relays,
            scenery,
            stats: Arc::default(),
        };
        // Every record can be built from here on; check it once.
        d.records()?;
        Ok(d)
    }

    /// The directory's counters, shared with the DNS part's listeners and pusher.
    pub fn stats(&self) -> &Arc<Stats> {
        &self.stats
    }

    /// The zone's parameters, serial included.
    pub fn zone(&self) -> &Zone {
        &self.zone
    }

    /// The zone's origin.
    pub fn origin(&self) -> &Name {
        &self.zone.origin
    }

    /// The current SOA serial.
    pub fn serial(&self) -> u32 {
        self.zone.serial
    }

    /// The relays, in publishing order (indexes are what [`Self::record_probes`] takes).
    pub fn relays(&self) -> &[TrackedRelay] {
        &self.relays
    }

    /// The scenery servers.
    pub fn scenery(&self) -> &[Scenery] {
        &self.scenery
    }

    /// Where to send this round's PINGs: every relay's index and probe address.
    pub fn probe_targets(&self) -> Vec<(usize, Option<SocketAddr>)> {
        self.relays
            .iter()
            .enumerate()
            .map(|(i, r)| (i, r.probe))
            .collect()
    }

    /// The relays whose probe address comes from resolving their host name:
    /// `(index, host, port, resolved yet)`. The caller resolves them (again when
    /// unresolved, and periodically: addresses change) and hands the result to
    /// [`Self::resolved`].
    pub fn to_resolve(&self) -> Vec<(usize, Name, u16, bool)> {
        self.relays
            .iter()
            .enumerate()
            .filter_map(|(i, r)| {
                let (h, p) = r.resolve.clone()?;
                Some((i, h, p, r.probe.is_some()))
            })
            .collect()
    }

    /// The result of resolving relay `i`'s host: a new probe address, or `None`
    /// (counted; the last address, if any, is kept). Returns true when the address
    /// changed.
    pub fn resolved(&mut self, i: usize, addr: Option<SocketAddr>) -> bool {
        let Some(t) = self.relays.get_mut(i).filter(|t| t.resolve.is_some()) else {
            return false;
        };
        match addr {
            None => {
                self.stats.count(Counter::RelayResolveFailed);
                false
            }
            Some(a) => {
                let changed = t.probe != Some(a);
                t.probe = Some(a);
                changed
            }
        }
    }

    /// Records a round of probes (`(index, round trip or None)`). When any relay's
    /// published state changed, the serial is bumped and the new records returned;
    /// otherwise `None`. Unknown indexes are ignored. `now` is when the round ended.
    pub fn record_probes(
        &mut self,
        outcomes: impl IntoIterator<Item = (usize, Option<Duration>)>,
        now: Instant,
    ) -> Result<Option<ZoneUpdate>, Error> {
        let owned_before = self.owned_records()?;
        let mut transitions = Vec::new();
        for (i, rtt) in outcomes {
            let Some(t) = self.relays.get_mut(i) else {
                continue;
            };
            t.last_rtt = rtt;
            if rtt.is_none() {
                self.stats.count(Counter::ProbeFailed);
            }
            let changed = t.health.record(rtt.is_some());
            if changed || t.since.is_none() {
                t.since = Some(now);
            }
            if changed {
                t.relay.up = t.health.is_up();
                transitions.push(Transition {
                    host: t.relay.host.clone(),
                    up: t.relay.up,
                });
            }
        }
        if transitions.is_empty() {
            return Ok(None);
        }
        self.zone.serial = self.zone.serial.wrapping_add(1);
        Ok(Some(ZoneUpdate {
            serial: self.zone.serial,
            transitions,
            records: self.records()?,
            owned_before,
            owned: self.owned_records()?,
        }))
    }

    fn published(&self) -> Vec<Relay> {
        self.relays.iter().map(|t| t.relay.clone()).collect()
    }

    /// Every record of the zone now (SOA and NS included).
    pub fn records(&self) -> Result<Vec<Record>, Error> {
        zone::records(&self.zone, &self.published(), &self.scenery)
    }

    /// The records lobby owns in the zone (everything but SOA and NS): what push
    /// mode replaces on the primary server.
    pub fn owned_records(&self) -> Result<Vec<Record>, Error> {
        zone::owned_records(&self.zone, &self.published(), &self.scenery)
    }

    /// The launcher's `mpservers.xml`.
    pub fn mpservers_xml(&self) -> String {
        let entries: Vec<mpservers_xml::Entry> = self
            .relays
            .iter()
            .map(|t| mpservers_xml::Entry {
                name: t.relay.name.clone(),
                location: t.relay.location.clone(),
                hostname: t.relay.host.to_string().trim_end_matches('.').to_string(),
                port: t.relay.port,
                online: t.health.is_up(),
            })
            .collect();
        mpservers_xml::render(&entries)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mpserver::{self, TxtError};
    use hickory_proto::rr::{RData, RecordType};

    fn relay(host: &str) -> RelayConfig {
        RelayConfig {
            host: host.into(),
            addresses: vec!["192.0.2.1".parse().unwrap()],
            port: 5000,
            priority: 10,
            weight: 20,
            name: format!("{host} name"),
            location: "Köln & Bonn".into(),
            extra: BTreeMap::new(),
            probe: None,
        }
    }

    fn config(relays: Vec<RelayConfig>) -> Config {
        Config {
            zone: ZoneConfig {
                origin: "fg.test".into(),
                ns: "ns1".into(),
                ns_addresses: vec!["127.0.0.1".parse().unwrap()],
                hostmaster: "hostmaster".into(),
                ttl: 60,
            },
            relays,
            scenery: vec![Scenery {
                url: "https://s.example.org/ws2/".into(),
                service: "ws20".into(),
                order: 100,
                preference: 50,
            }],
            fall: 2,
            rise: 2,
        }
    }

    fn no_resolver(_: &Name, _: u16) -> Option<SocketAddr> {
        None
    }

    fn build(c: &Config) -> Result<Directory, Error> {
        Directory::new(c, 7, no_resolver)
    }

    fn srv_ports(records: &[Record]) -> Vec<u16> {
        records
            .iter()
            .filter_map(|r| match &r.data {
                RData::SRV(s) => Some(s.port),
                _ => None,
            })
            .collect()
    }

    fn soa_serial(records: &[Record]) -> u32 {
        records
            .iter()
            .find_map(|r| match &r.data {
                RData::SOA(s) => Some(s.serial),
                _ => None,
            })
            .unwrap()
    }

    #[test]
    fn typed_name_and_location_reach_the_txt_record() {
        let mut r = relay("mp1");
        r.extra.insert("software".into(), "lobby".into());
        let d = build(&config(vec![r])).unwrap();
        let recs = d.records().unwrap();
        let txt = recs
            .iter()
            .find(|r| r.record_type() == RecordType::TXT)
            .unwrap();
        assert_eq!(txt.name.to_string(), "mp1.fg.test.");
        let RData::TXT(t) = &txt.data else { panic!() };
        let decoded = mpserver::decode(&t.txt_data).unwrap();
        assert_eq!(decoded.attrs["name"], "mp1 name");
        assert_eq!(decoded.attrs["location"], "Köln & Bonn");
        assert_eq!(decoded.attrs["software"], "lobby");
        let xml = d.mpservers_xml();
        assert!(xml.contains("<name>mp1 name</name>"), "{xml}");
        assert!(
            xml.contains("<location>Köln &amp; Bonn</location>"),
            "{xml}"
        );
        assert!(xml.contains("<hostname>mp1.fg.test</hostname>"), "{xml}");
        assert_eq!(d.scenery()[0].url, "https://s.example.org/ws2");
    }

    #[test]
    fn health_transitions_move_the_srv_port_and_bump_the_serial() {
        let mut d = build(&config(vec![relay("mp1"), relay("mp2")])).unwrap();
        // Unprobed: published as down, so nobody is sent to a relay that may not run.
        assert_eq!(srv_ports(&d.records().unwrap()), vec![0, 0]);
        assert!(!d.mpservers_xml().contains("true"));
        let ok = Some(Duration::from_millis(3));
        assert_eq!(d.relays()[0].since(), None);
        let t0 = Instant::now();
        let at = |s: u64| t0 + Duration::from_secs(s);
        // Both answer: the first good probe publishes the real port.
        let first = d.record_probes([(0, ok), (1, ok)], at(0)).unwrap().unwrap();
        assert_eq!(d.relays()[1].since(), Some(at(0)));
        assert_eq!(first.serial, 8);
        assert_eq!(first.transitions.len(), 2);
        assert_eq!(srv_ports(&first.owned_before), vec![0, 0]);
        assert_eq!(srv_ports(&first.records), vec![5000, 5000]);
        assert_eq!(
            d.record_probes([(0, ok), (1, ok)], Instant::now()).unwrap(),
            None
        );
        assert_eq!(d.serial(), 8);
        // mp2 misses one probe: fall is 2, still up.
        assert_eq!(
            d.record_probes([(0, ok), (1, None)], Instant::now())
                .unwrap(),
            None
        );
        let down = d
            .record_probes([(0, ok), (1, None)], at(9))
            .unwrap()
            .unwrap();
        assert_eq!(d.relays()[0].since(), Some(at(0)), "mp1 stayed up");
        assert_eq!(d.relays()[1].since(), Some(at(9)), "mp2 went down at 9 s");
        assert_eq!(down.serial, 9);
        assert_eq!(d.serial(), 9);
        assert_eq!(
            down.transitions,
            vec![Transition {
                host: Name::from_str("mp2.fg.test.").unwrap(),
                up: false
            }]
        );
        assert_eq!(srv_ports(&down.records), vec![5000, 0]);
        assert_eq!(soa_serial(&down.records), 9);
        assert_eq!(srv_ports(&down.owned_before), vec![5000, 5000]);
        assert_eq!(srv_ports(&down.owned), vec![5000, 0]);
        assert!(d
            .mpservers_xml()
            .contains("<online type=\"bool\">false</online>"));
        assert_eq!(d.relays()[1].last_rtt(), None);
        // Back after rise = 2 successes.
        assert_eq!(d.record_probes([(1, ok)], Instant::now()).unwrap(), None);
        let up = d
            .record_probes([(1, ok), (9, None)], Instant::now())
            .unwrap()
            .unwrap();
        assert_eq!(up.serial, 10);
        assert!(up.transitions[0].up);
        assert_eq!(srv_ports(&up.records), vec![5000, 5000]);
        assert!(soa_serial(&up.records) > soa_serial(&down.records));
        assert_eq!(d.relays()[1].last_rtt(), ok);
    }

    #[test]
    fn probe_addresses() {
        let mut explicit = relay("mp1");
        explicit.probe = Some("198.51.100.7:5010".parse().unwrap());
        let mut external = relay("mpserver01.flightgear.org.");
        external.addresses.clear();
        let mut asked = Vec::new();
        let d = Directory::new(
            &config(vec![explicit, relay("mp2"), external]),
            1,
            |host: &Name, port| {
                asked.push((host.to_string(), port));
                None
            },
        )
        .unwrap();
        assert_eq!(
            d.probe_targets(),
            vec![
                (0, Some("198.51.100.7:5010".parse().unwrap())),
                (1, Some("192.0.2.1:5000".parse().unwrap())),
                (2, None),
            ]
        );
        assert_eq!(asked, vec![("mpserver01.flightgear.org.".into(), 5000)]);
        // Only the relay without an address is resolved, and again later.
        let mut d = d;
        let todo = d.to_resolve();
        assert_eq!(todo.len(), 1);
        assert_eq!((todo[0].0, todo[0].2, todo[0].3), (2, 5000, false));
        assert!(!d.resolved(2, None));
        assert_eq!(d.stats().get(Counter::RelayResolveFailed), 1);
        assert!(d.resolved(2, Some("203.0.113.9:5000".parse().unwrap())));
        assert!(!d.resolved(2, None), "a failure keeps the last address");
        assert_eq!(
            d.probe_targets()[2].1,
            Some("203.0.113.9:5000".parse().unwrap())
        );
        assert!(d.to_resolve()[0].3);
        assert!(
            !d.resolved(0, Some("192.0.2.99:1".parse().unwrap())),
            "configured addresses are not replaced"
        );
        assert_eq!(
            d.probe_targets()[0].1,
            Some("198.51.100.7:5010".parse().unwrap())
        );
    }

    #[test]
    fn errors_are_variants() {
        let mut c = config(vec![relay("mp1")]);
        c.zone.origin = "a..b".into();
        assert!(matches!(
            build(&c),
            Err(Error::InvalidName { what: "zone", .. })
        ));
        let mut c = config(vec![relay("bad..host")]);
        assert!(matches!(
            build(&c),
            Err(Error::InvalidName {
                what: "relay host",
                ..
            })
        ));
        c.relays[0] = relay("mp1");
        c.relays[0].location = "x".repeat(200);
        let e = build(&c).unwrap_err();
        assert!(
            matches!(&e, Error::Txt { host, source: TxtError::TooLong(n) } if host == "mp1" && *n > 255),
            "{e:?}"
        );
        assert!(e.to_string().starts_with("relay mp1: TXT string of"), "{e}");
        let mut c = config(vec![]);
        c.scenery[0].url = "ftp://s.example.org/".into();
        assert_eq!(
            build(&c).unwrap_err(),
            Error::SceneryScheme("ftp://s.example.org/".into())
        );
        let mut c = config(vec![]);
        c.scenery[0].service = "ws 20".into();
        assert_eq!(
            build(&c).unwrap_err(),
            Error::SceneryService("ws 20".into())
        );
    }
}
