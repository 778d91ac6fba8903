//! One master engine and simulated Xash3D servers (`sim::Server`) stepped through the
//! in-memory network (`sansio::net`): the heartbeat / challenge / info handshake,
//! expiry over several TTLs, and NAT announce, all in virtual time. Nothing sleeps.

use master::{Config, Counter, Engine, Stats};
use sansio::net::{Delivered, Network};
use sim::FleetSpec;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};
use xash::info::InfoString;
use xash::master::{NatConnect, ScanRequest, ServerInfo, ServerListPage};
use xash::text::InfoReply;

const LATENCY: Duration = Duration::from_millis(20);

fn addr(s: &str) -> SocketAddr {
    s.parse().unwrap()
}

fn secs(s: u64) -> Duration {
    Duration::from_secs(s)
}

const MASTER: &str = "192.0.2.1:27010";
/// A client on a public address (the sim, like the engine, ignores NAT connects for
/// private ones).
const CLIENT: &str = "198.51.100.7:27005";

/// A network with the master at [`MASTER`] (started at the network's start).
fn network(config: Config) -> (Network, SocketAddr) {
    let t0 = Instant::now();
    let mut net = Network::new(t0, LATENCY);
    let m = addr(MASTER);
    net.add(
        m,
        Engine::new(config, Arc::new(Stats::default()), [7; 32], t0),
    );
    net.record(true);
    (net, m)
}

/// `count` simulated servers on `ip`, ports 27015…, registering with the master.
fn fleet(ip: &str, count: u16, nat: bool) -> FleetSpec {
    FleetSpec {
        count,
        seed: 8,
        masters: vec![addr(MASTER)],
        listen_ip: ip.parse().unwrap(),
        base_port: 27015,
        nat,
        ..FleetSpec::default()
    }
}

/// Puts the fleet's servers on the network; returns their addresses.
fn start(net: &mut Network, spec: &FleetSpec) -> Vec<SocketAddr> {
    (0..spec.count)
        .map(|i| {
            let a = spec.addr(i);
            let s = sim::Server::new(spec.config(i).unwrap(), net.now()).unwrap();
            net.add(a, s);
            a
        })
        .collect()
}

/// The master's server table, sorted.
fn listed(net: &mut Network, m: SocketAddr) -> Vec<SocketAddr> {
    let mut v: Vec<SocketAddr> = net
        .engine::<Engine>(m)
        .table()
        .iter()
        .map(|(a, ..)| a)
        .collect();
    v.sort();
    v
}

/// The scan a current engine sends, with `filter` (no key).
fn scan_request(filter: &str) -> Vec<u8> {
    let mut b = Vec::new();
    ScanRequest {
        region: 0xff,
        last: None,
        filter: InfoString::parse(filter.as_bytes()).unwrap(),
        final_nul: true,
        malformed_last: false,
    }
    .encode(&mut b);
    b
}

/// Scans from `client` and returns the listed servers (sorted) and everything else
/// that reached the client.
fn scan(
    net: &mut Network,
    m: SocketAddr,
    client: SocketAddr,
    filter: &str,
) -> (Vec<SocketAddr>, Vec<Delivered>) {
    net.send(client, m, &scan_request(filter));
    net.run_for(secs(1));
    let (pages, other): (Vec<Delivered>, Vec<Delivered>) = net
        .take_inbox(client)
        .into_iter()
        .partition(|d| d.from == m);
    let mut servers = Vec::new();
    for p in &pages {
        let page = ServerListPage::decode(&p.payload, false, false).unwrap();
        assert!(page.terminated);
        servers.extend(page.servers);
    }
    servers.sort();
    (servers, other)
}

#[test]
fn heartbeating_servers_register_and_a_scan_lists_exactly_them() {
    let (mut net, m) = network(Config::default());
    let mut servers = start(&mut net, &fleet("203.0.113.10", 3, false));
    // Servers that never reach this master: a single-player game (no heartbeats) and
    // one registered with another master.
    let single = addr("203.0.113.20:27015");
    let solo_config = sim::Config {
        max_players: 1,
        masters: vec![m],
        ..sim::Config::default()
    };
    net.add(single, sim::Server::new(solo_config, net.now()).unwrap());
    let elsewhere = addr("203.0.113.21:27015");
    let other_master = sim::Config {
        masters: vec![addr("192.0.2.99:27010")],
        ..sim::Config::default()
    };
    net.add(
        elsewhere,
        sim::Server::new(other_master, net.now()).unwrap(),
    );

    net.run_for(secs(1));
    servers.sort();
    assert_eq!(listed(&mut net, m), servers);
    // Each did the handshake once: heartbeat, challenge, info.
    let hops = net.take_hops();
    for &s in &servers {
        let from_s: Vec<&[u8]> = hops
            .iter()
            .filter(|h| h.from == s && h.to == m)
            .map(|h| h.payload.as_slice())
            .collect();
        assert_eq!(from_s.len(), 2, "heartbeat and info from {s}");
        assert_eq!(&from_s[0][..2], b"q\xff");
        let info = ServerInfo::decode(from_s[1]).unwrap();
        assert_eq!(info.info.get_str("gamedir").as_deref(), Some("valve"));
        assert_eq!(net.engine::<sim::Server>(s).stats().master_infos, 1);
    }
    assert_eq!(
        net.engine::<Engine>(m).stats().get(Counter::ServersAdded),
        3
    );

    let (list, other) = scan(&mut net, m, addr(CLIENT), "\\clver\\0.21\\gamedir\\valve");
    assert_eq!(list, servers);
    assert!(other.is_empty());
    let (list, _) = scan(&mut net, m, addr(CLIENT), "\\clver\\0.21\\gamedir\\cstrike");
    assert!(list.is_empty());
}

#[test]
fn a_silent_server_expires_after_server_ttl_while_heartbeating_ones_stay_listed() {
    let (mut net, m) = network(Config::default());
    let ttl = net.engine::<Engine>(m).config().server_ttl;
    let direct = start(&mut net, &fleet("203.0.113.10", 2, false));
    let natted = start(&mut net, &fleet("203.0.113.30", 1, true));
    let (stays, goes, nat) = (direct[0], direct[1], natted[0]);
    net.run_for(secs(400));
    assert_eq!(listed(&mut net, m), vec![stays, goes, nat]);
    // From now on nothing `goes` sends arrives: its last info was at its 300 s heartbeat.
    net.set_filter(move |from, _, _| from != goes);
    let hops = net.take_hops();
    let last_info = hops
        .iter()
        .filter(|h| h.from == goes && h.payload.starts_with(ServerInfo::HEADER))
        .map(|h| h.at)
        .next_back()
        .expect("an info from the server");
    let expired = net
        .run_until_met(last_info + ttl + secs(5), |n| !listed(n, m).contains(&goes))
        .expect("the silent server expired");
    assert!(
        expired > last_info + ttl && expired <= last_info + ttl + secs(1),
        "expired {:?} after its last info",
        expired - last_info
    );
    assert_eq!(listed(&mut net, m), vec![stays, nat]);
    // Three more TTLs: the others are never dropped, not for a second.
    let end = net.now() + ttl * 3;
    let dropped = net.run_until_met(end, |n| listed(n, m) != [stays, nat]);
    assert_eq!(dropped, None, "a heartbeating server dropped out");
    let e = net.engine::<Engine>(m);
    assert_eq!(e.stats().get(Counter::ServersExpired), 1);
    let hb_stays = net.engine::<sim::Server>(stays).stats().heartbeats;
    let hb_nat = net.engine::<sim::Server>(nat).stats().heartbeats;
    let elapsed = net.elapsed().as_secs();
    assert_eq!(hb_stays, elapsed / 300 + 1, "every 300 s");
    assert_eq!(hb_nat, elapsed / 60 + 1, "every 60 s with NAT");
    let (list, _) = scan(&mut net, m, addr(CLIENT), "\\clver\\0.21");
    assert_eq!(list, vec![stays, nat]);
}

#[test]
fn a_nat_server_is_listed_for_nat_scans_and_answers_the_announced_client() {
    let (mut net, m) = network(Config::default());
    let direct = start(&mut net, &fleet("203.0.113.10", 1, false))[0];
    let natted = start(&mut net, &fleet("203.0.113.30", 1, true))[0];
    net.run_for(secs(1));
    assert_eq!(listed(&mut net, m), vec![direct, natted]);
    net.take_hops();

    // \nat\0: only the direct server, and no server is told about the client.
    let c0 = addr("198.51.100.8:27005");
    let (list, other) = scan(&mut net, m, c0, "\\clver\\0.21\\nat\\0");
    assert_eq!(list, vec![direct]);
    assert!(other.is_empty());
    assert!(net.take_hops().iter().all(|h| h.to != natted));

    // \nat\1: only the NAT server; the master sends it `c <client>`, and it answers
    // the client directly with its info reply.
    let client = addr(CLIENT);
    let (list, other) = scan(&mut net, m, client, "\\clver\\0.21\\nat\\1");
    assert_eq!(list, vec![natted]);
    let told: Vec<SocketAddr> = net
        .take_hops()
        .iter()
        .filter(|h| h.from == m && h.to == natted)
        .map(|h| NatConnect::decode(&h.payload).unwrap().client)
        .collect();
    assert_eq!(told, vec![client]);
    assert_eq!(other.len(), 1, "one reply from the server: {other:?}");
    assert_eq!(other[0].from, natted);
    let InfoReply::Info(info) = InfoReply::decode(&other[0].payload).unwrap() else {
        panic!("wrong version reply");
    };
    let hostname = net.engine::<sim::Server>(natted).config().hostname.clone();
    assert_eq!(info.get_str("host"), Some(hostname));
    assert_eq!(info.get_str("p").as_deref(), Some("49"));
    assert_eq!(net.engine::<sim::Server>(natted).stats().nat_connects, 1);
    assert_eq!(
        net.engine::<Engine>(m).stats().get(Counter::NatAnnounces),
        1
    );
}
