//! The configuration as the directory takes it ([`nameserver::build`]): the local
//! relay's record and the errors that name their setting. No socket.

use config::{DirectorySection, DnsSection, RelayEntry};
use std::collections::BTreeMap;

fn entry(host: &str) -> RelayEntry {
    RelayEntry {
        host: host.into(),
        port: 5000,
        addresses: vec!["127.0.0.1".into()],
        name: "mp1".into(),
        location: "Test".into(),
        priority: 10,
        weight: 20,
        attributes: BTreeMap::new(),
        probe: String::new(),
    }
}

#[test]
fn the_local_relay_is_published_when_asked() {
    let local = Some(("127.0.0.1:5002".parse().unwrap(), "lobby01".to_string()));
    let mut dir = DirectorySection {
        relay: vec![entry("mp1")],
        ..DirectorySection::default()
    };
    let d = nameserver::build(&DnsSection::default(), &dir, local.clone(), 1).unwrap();
    let r = d.relays()[1].relay();
    assert_eq!(r.host.to_string(), "relay.fg.lobby.test.");
    assert_eq!(
        (r.name.as_str(), r.location.as_str()),
        ("lobby01", "this lobby")
    );
    assert_eq!(
        d.relays()[1].probe(),
        Some("127.0.0.1:5002".parse().unwrap())
    );
    assert_eq!(
        d.relays()[0].probe(),
        Some("127.0.0.1:5000".parse().unwrap())
    );
    dir.include_local_relay = false;
    assert_eq!(
        nameserver::build(&DnsSection::default(), &dir, local, 1)
            .unwrap()
            .relays()
            .len(),
        1
    );
}

#[test]
fn configuration_errors_name_the_setting() {
    let mut dir = DirectorySection {
        relay: vec![entry("mp1")],
        ..DirectorySection::default()
    };
    dir.relay[0].probe = "nowhere".into();
    let e = nameserver::build(&DnsSection::default(), &dir, None, 1).unwrap_err();
    assert!(format!("{e:#}").contains("directory.relay.probe"), "{e:#}");
    dir.relay[0] = entry("bad..host");
    let e = nameserver::build(&DnsSection::default(), &dir, None, 1).unwrap_err();
    assert!(
        matches!(
            e.downcast_ref::<directory::Error>(),
            Some(directory::Error::InvalidName {
                what: "relay host",
                ..
            })
        ),
        "{e:#}"
    );
}
