//! The DNS records that publish the directory: a pure function from the model
//! (relays with their health, scenery servers) to hickory `Record`s, used both by
//! the authoritative server and by the RFC 2136 push.

use crate::mpserver;
use crate::terrasync;
use crate::Error;
use hickory_proto::rr::rdata::{A, AAAA, NAPTR, NS, SOA, SRV, TXT};
use hickory_proto::rr::{Name, RData, Record, RecordType};
use std::collections::BTreeMap;
use std::net::IpAddr;
use std::str::FromStr;

/// A FlightGear relay to publish.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Relay {
    /// SRV target (fully qualified).
    pub host: Name,
    /// A/AAAA records for `host` when it lies inside the zone.
    pub addresses: Vec<IpAddr>,
    /// UDP port published while up (0 while down).
    pub port: u16,
    /// SRV priority.
    pub priority: u16,
    /// SRV weight.
    pub weight: u16,
    /// Display name (TXT `name`).
    pub name: String,
    /// Location text (TXT `location`).
    pub location: String,
    /// Further TXT attributes published beside `name` and `location`.
    pub extra: BTreeMap<String, String>,
    /// Whether the relay answers.
    pub up: bool,
}

/// A TerraSync / osm2city server to publish.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scenery {
    /// Base URL (no trailing slash).
    pub url: String,
    /// `ws20`, `o2c`, ...
    pub service: String,
    /// NAPTR order.
    pub order: u16,
    /// NAPTR preference.
    pub preference: u16,
}

/// Zone parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Zone {
    /// Origin, e.g. `fg.example.org.`.
    pub origin: Name,
    /// Name server name.
    pub ns: Name,
    /// Addresses of the name server (A/AAAA when it lies in the zone).
    pub ns_addresses: Vec<IpAddr>,
    /// Responsible mailbox, as a name.
    pub hostmaster: Name,
    /// TTL of the published records.
    pub ttl: u32,
    /// SOA serial; bumped by the caller on every change.
    pub serial: u32,
}

/// `_fgms._udp.<origin>`.
pub fn srv_name(origin: &Name) -> Name {
    Name::from_str("_fgms._udp")
        .and_then(|n| n.append_domain(origin))
        .unwrap_or_else(|_| origin.clone())
}

/// `terrasync.<origin>`.
pub fn terrasync_name(origin: &Name) -> Name {
    Name::from_str("terrasync")
        .and_then(|n| n.append_domain(origin))
        .unwrap_or_else(|_| origin.clone())
}

/// A name relative to `origin` unless it ends with a dot; `what` names the setting
/// in the error.
pub fn name_in(origin: &Name, s: &str, what: &'static str) -> Result<Name, Error> {
    let invalid = |e: hickory_proto::ProtoError| Error::InvalidName {
        what,
        name: s.to_string(),
        reason: e.to_string(),
    };
    let n = Name::from_str(s).map_err(invalid)?;
    if n.is_fqdn() {
        Ok(n)
    } else {
        n.append_domain(origin).map_err(invalid)
    }
}

/// A scenery service as SimGear compares it: letters, digits and `+`.
pub fn check_service(service: &str) -> Result<(), Error> {
    if service.is_empty()
        || !service
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'+')
    {
        return Err(Error::SceneryService(service.to_string()));
    }
    Ok(())
}

fn rec(name: &Name, ttl: u32, data: RData) -> Record {
    Record::from_rdata(name.clone(), ttl, data)
}

fn addr_records(name: &Name, ttl: u32, addrs: &[IpAddr], out: &mut Vec<Record>) {
    for a in addrs {
        out.push(match a {
            IpAddr::V4(v4) => rec(name, ttl, RData::A(A(*v4))),
            IpAddr::V6(v6) => rec(name, ttl, RData::AAAA(AAAA(*v6))),
        });
    }
}

/// Every record of the zone. Errors name the offending relay or URL.
pub fn records(zone: &Zone, relays: &[Relay], scenery: &[Scenery]) -> Result<Vec<Record>, Error> {
    let mut out = Vec::new();
    let o = &zone.origin;
    out.push(rec(
        o,
        zone.ttl,
        RData::SOA(SOA::new(
            zone.ns.clone(),
            zone.hostmaster.clone(),
            zone.serial,
            3600,
            600,
            86400,
            zone.ttl,
        )),
    ));
    out.push(rec(o, zone.ttl, RData::NS(NS(zone.ns.clone()))));
    if o.zone_of(&zone.ns) {
        addr_records(&zone.ns, zone.ttl, &zone.ns_addresses, &mut out);
    }
    out.extend(owned_records(zone, relays, scenery)?);
    Ok(out)
}

/// The records lobby owns in the zone (everything but SOA and NS): what push mode
/// replaces on the primary server.
pub fn owned_records(
    zone: &Zone,
    relays: &[Relay],
    scenery: &[Scenery],
) -> Result<Vec<Record>, Error> {
    let mut out = Vec::new();
    let o = &zone.origin;
    let srv = srv_name(o);
    for r in relays {
        let port = if r.up { r.port } else { 0 };
        out.push(rec(
            &srv,
            zone.ttl,
            RData::SRV(SRV::new(r.priority, r.weight, port, r.host.clone())),
        ));
        if o.zone_of(&r.host) {
            let txt =
                mpserver::encode_relay(&r.name, &r.location, &r.extra).map_err(|e| Error::Txt {
                    host: r.host.to_string(),
                    source: e,
                })?;
            out.push(rec(&r.host, zone.ttl, RData::TXT(TXT::new(vec![txt]))));
            addr_records(&r.host, zone.ttl, &r.addresses, &mut out);
        }
    }
    let ts = terrasync_name(o);
    for s in scenery {
        let regexp = terrasync::regexp_for(&s.url)?;
        check_service(&s.service)?;
        out.push(rec(
            &ts,
            zone.ttl,
            RData::NAPTR(NAPTR::new(
                s.order,
                s.preference,
                b"U".to_vec().into_boxed_slice(),
                s.service.as_bytes().to_vec().into_boxed_slice(),
                regexp.into_bytes().into_boxed_slice(),
                Name::root(),
            )),
        ));
    }
    Ok(out)
}

/// The (name, type) pairs of the owned records: what push mode deletes first.
pub fn owned_rrsets(records: &[Record]) -> Vec<(Name, RecordType)> {
    let mut v: Vec<(Name, RecordType)> = records
        .iter()
        .map(|r| (r.name.clone(), r.record_type()))
        .collect();
    v.sort();
    v.dedup();
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    fn zone() -> Zone {
        let origin = Name::from_str("fg.test.").unwrap();
        Zone {
            ns: name_in(&origin, "ns1", "ns").unwrap(),
            ns_addresses: vec!["127.0.0.1".parse().unwrap()],
            hostmaster: name_in(&origin, "hostmaster", "hostmaster").unwrap(),
            origin,
            ttl: 60,
            serial: 7,
        }
    }

    fn relay(host: &str, up: bool) -> Relay {
        let z = zone();
        Relay {
            host: name_in(&z.origin, host, "relay host").unwrap(),
            addresses: vec!["127.0.0.1".parse().unwrap()],
            port: 5000,
            priority: 10,
            weight: 20,
            name: host.to_string(),
            location: "Test".to_string(),
            extra: BTreeMap::new(),
            up,
        }
    }

    #[test]
    fn srv_port_zero_while_down_and_one_txt_per_host() {
        let z = zone();
        let recs = records(&z, &[relay("mp1", true), relay("mp2", false)], &[]).unwrap();
        let srv: Vec<(String, u16)> = recs
            .iter()
            .filter_map(|r| match &r.data {
                RData::SRV(s) => Some((s.target.to_string(), s.port)),
                _ => None,
            })
            .collect();
        assert_eq!(
            srv,
            vec![("mp1.fg.test.".into(), 5000), ("mp2.fg.test.".into(), 0)]
        );
        let txts: Vec<&Record> = recs
            .iter()
            .filter(|r| r.record_type() == RecordType::TXT)
            .collect();
        assert_eq!(txts.len(), 2);
        let RData::TXT(t) = &txts[0].data else {
            panic!()
        };
        assert_eq!(t.txt_data.len(), 1, "one character-string");
        assert!(t.txt_data[0].len() <= 255);
        assert!(recs.iter().any(|r| r.record_type() == RecordType::SOA));
        assert_eq!(
            recs.iter()
                .filter(|r| r.record_type() == RecordType::A)
                .count(),
            3,
            "ns1, mp1, mp2"
        );
    }

    #[test]
    fn naptr_and_bad_urls() {
        let z = zone();
        let s = Scenery {
            url: "https://a.example.org/ws2".into(),
            service: "ws20".into(),
            order: 100,
            preference: 50,
        };
        let recs = owned_records(&z, &[], std::slice::from_ref(&s)).unwrap();
        let RData::NAPTR(n) = &recs[0].data else {
            panic!()
        };
        assert_eq!(&*n.flags, b"U");
        assert_eq!(&*n.regexp, b"!^.*$!https://a.example.org/ws2!");
        assert_eq!(recs[0].name.to_string(), "terrasync.fg.test.");
        let bad = Scenery {
            url: "https://a!b".into(),
            ..s.clone()
        };
        assert_eq!(
            owned_records(&z, &[], &[bad]),
            Err(Error::SceneryUrl("https://a!b".into()))
        );
        let bad = Scenery {
            service: "ws 20".into(),
            ..s
        };
        assert_eq!(
            owned_records(&z, &[], &[bad]),
            Err(Error::SceneryService("ws 20".into()))
        );
    }

    #[test]
    fn out_of_zone_hosts_get_srv_only() {
        let z = zone();
        let mut r = relay("mp1", true);
        r.host = Name::from_str("mpserver01.flightgear.org.").unwrap();
        let recs = owned_records(&z, &[r], &[]).unwrap();
        assert_eq!(recs.len(), 1);
        assert_eq!(recs[0].record_type(), RecordType::SRV);
    }
}
