//! The JSON API over real sockets: `lobby up` with a relay, a master and HTTP on
//! 127.0.0.1 port 0; pilots sent as real FlightGear datagrams.

mod common;

use common::*;
use serde_json::Value;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

/// `lobby up` with a relay, a master and HTTP (no DNS, no simulated servers), with
/// short HTTP idle and lifetime limits and one stream at most.
fn start(tag: &str) -> Lobby {
    start_with(
        tag,
        "idle_timeout = 1\nconnection_timeout = 2\nmax_streams = 1\n",
    )
}

/// `lobby up` with a relay, a master and HTTP, `http` the rest of its `[http]` table.
fn start_with(tag: &str, http: &str) -> Lobby {
    start_up(tag, "", http)
}

/// [`start_with`], `relay` the rest of its `[relay]` table.
fn start_up(tag: &str, relay: &str, http: &str) -> Lobby {
    let dir = std::env::temp_dir().join(format!("lobby-api-{}-{tag}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cfg = dir.join("up.toml");
    std::fs::write(
        &cfg,
        format!(
            "[relay]\nlisten = [\"127.0.0.1:0\"]\ntelnet = []\n{relay}[master]\nlisten = [\"127.0.0.1:0\"]\n\
             [dns]\nlisten = []\n[sim]\ncount = 0\n[http]\nlisten = [\"127.0.0.1:0\"]\n{http}"
        ),
    )
    .unwrap();
    Lobby::start(&["up", "--config", cfg.to_str().unwrap()], 3)
}

fn json(addr: SocketAddr, path: &str) -> (u16, Value) {
    let (code, body) = http_get(addr, path);
    let v = serde_json::from_str(&body).unwrap_or_else(|e| panic!("{path}: {e}: {body:?}"));
    (code, v)
}

/// Opens `path` as a stream and returns the socket after the response head.
fn open_stream(addr: SocketAddr) -> (TcpStream, String) {
    let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(5)).unwrap();
    s.write_all(b"GET /api/pilots/stream HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    s.set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    let mut got = String::new();
    let deadline = Instant::now() + Duration::from_secs(5);
    while !got.contains("\r\n\r\n") && Instant::now() < deadline {
        let mut b = [0u8; 4096];
        if let Ok(n) = s.read(&mut b) {
            if n == 0 {
                break;
            }
            got.push_str(&String::from_utf8_lossy(&b[..n]));
        }
    }
    (s, got)
}

#[test]
fn pilots_stream_and_errors_over_http() {
    let up = start("main");
    let http = up.addr("http", "tcp");
    let relay = up.addrs("relay", "udp")[0];
    let a = client(false);
    let alpha = pos("ALPHA", BIKF, 100);
    a.send_to(&alpha, relay).unwrap();
    // The pilot appears where it was sent (BIKF, 1000 m: common::pos), once the
    // snapshot after its first datagram is taken.
    let deadline = Instant::now() + Duration::from_secs(5);
    let p = loop {
        let (code, v) = json(http, "/api/pilots");
        assert_eq!(code, 200);
        if v["online"] == 1 {
            break v["pilots"][0].clone();
        }
        assert!(Instant::now() < deadline, "pilot never listed: {v}");
    };
    assert_eq!(p["callsign"], "ALPHA");
    assert_eq!(p["aircraft"], "c172p");
    assert!((p["lat"].as_f64().unwrap() - BIKF.0).abs() < 1e-5, "{p}");
    assert!((p["lon"].as_f64().unwrap() - BIKF.1).abs() < 1e-5, "{p}");
    assert_eq!(p["local"], true);
    assert!(p["relay"].is_null());
    // Filters, and errors that name what is wrong.
    let (_, v) = json(http, "/api/pilots?near=64.0,-22.6,5");
    assert_eq!(v["pilots"].as_array().unwrap().len(), 1);
    let (_, v) = json(http, "/api/pilots?near=0,0,5");
    assert_eq!(v["pilots"].as_array().unwrap().len(), 0);
    assert_eq!(v["online"], 1);
    let (code, v) = json(http, "/api/pilots?near=north");
    assert_eq!(code, 400);
    assert!(v["error"].as_str().unwrap().starts_with("near:"), "{v}");
    let (code, v) = json(http, "/api/servers?color=red");
    assert_eq!(code, 400);
    assert!(v["error"].as_str().unwrap().contains("color"), "{v}");
    // The directory runs (push-only here: no DNS listener) and publishes the relay.
    let (code, v) = json(http, "/api/dns");
    assert_eq!(code, 200);
    assert!(
        v["records"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["type"] == "SRV"),
        "{v}"
    );
    let (code, v) = json(http, "/api/servers");
    assert_eq!((code, &v["total"]), (200, &Value::from(0)));
    let (code, v) = json(http, "/readyz");
    assert_eq!(code, 200, "{v}");
    let parts: Vec<&str> = v["parts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["part"].as_str().unwrap())
        .collect();
    assert_eq!(parts, ["relay", "master", "dns", "http"]);
    assert_eq!(json(http, "/healthz").1["status"], "ok");

    // A stream outlives the connection's idle timer (1 s) and its lifetime (2 s):
    // it is read for 4 s with the client silent, and carries ALPHA's moves.
    let (mut s, head) = open_stream(http);
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert!(
        head.to_lowercase()
            .contains("content-type: text/event-stream"),
        "{head}"
    );
    // Only one stream is allowed: a second is refused with 503 and a JSON reason.
    let (_, second) = open_stream(http);
    assert!(second.starts_with("HTTP/1.1 503"), "{second}");
    let mut text = head;
    let t0 = Instant::now();
    let mut i = 0;
    while t0.elapsed() < Duration::from_secs(4) {
        i += 1;
        let moved = pos("ALPHA", (BIKF.0 + i as f64 * 1e-3, BIKF.1), 100);
        a.send_to(&moved, relay).unwrap();
        let mut b = [0u8; 65536];
        match s.read(&mut b) {
            Ok(0) => panic!("stream closed after {:?}: {text}", t0.elapsed()),
            Ok(n) => text.push_str(&String::from_utf8_lossy(&b[..n])),
            Err(_) => {} // read timeout: nothing this 200 ms
        }
    }
    assert!(text.contains("event: snapshot"), "{text}");
    let updates: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("data: {\"generated_at\"") && l.contains("\"moved\""))
        .collect();
    assert!(updates.len() >= 2, "one update per second: {text}");
    let last: Value =
        serde_json::from_str(updates.last().unwrap().strip_prefix("data: ").unwrap()).unwrap();
    let m = &last["moved"][0];
    assert_eq!(m[0], "ALPHA");
    assert!(m[1].as_f64().unwrap() > BIKF.0 + 1e-3, "moved north: {m}");
}

#[test]
fn the_openapi_document_names_every_path_and_field() {
    let up = start("openapi");
    let http = up.addr("http", "tcp");
    let (code, doc) = json(http, "/api/openapi.json");
    assert_eq!(code, 200);
    assert!(doc["openapi"].as_str().unwrap().starts_with("3.1"));
    let paths: Vec<&String> = doc["paths"].as_object().unwrap().keys().collect();
    for p in [
        "/api/pilots",
        "/api/pilots/stream",
        "/api/chat",
        "/api/atc",
        "/api/airports",
        "/api/airports/{ident}",
        "/api/servers",
        "/api/relays",
        "/api/dns",
        "/healthz",
        "/readyz",
        "/api/flights",
        "/api/flights/{id}",
        "/api/flights/{id}/gpx",
        "/api/flights/{id}/kml",
        "/api/callsigns/{callsign}",
        "/api/callsigns/{callsign}/csv",
        "/api/leaderboards",
        "/api/servers/{addr}/history",
        "/api/servers/{addr}/details",
        "/api/servers/register",
        "/api/list/heatmaps",
        "/api/admin/{name}",
        "/api/admin/{name}/{entry}",
    ] {
        assert!(paths.iter().any(|x| *x == p), "{p} missing from {paths:?}");
    }
    // The parameters carry their real types, defaults and bounds (from the query
    // structs), and each is typed.
    let param = |path: &str, name: &str| -> Value {
        let ps = doc["paths"][path]["get"]["parameters"].as_array().unwrap();
        ps.iter()
            .find(|p| p["name"] == name)
            .unwrap_or_else(|| panic!("{path} {name}: {ps:?}"))
            .clone()
    };
    let limit = param("/api/flights", "limit");
    assert_eq!(
        (
            &limit["in"],
            &limit["required"],
            &limit["schema"]["type"],
            &limit["schema"]["minimum"],
            &limit["schema"]["maximum"],
            &limit["schema"]["default"],
        ),
        (
            &Value::from("query"),
            &Value::from(false),
            &Value::from("integer"),
            &Value::from(1),
            &Value::from(500),
            &Value::from(50)
        ),
        "{limit}"
    );
    let id = param("/api/flights/{id}", "id");
    assert_eq!(
        (&id["in"], &id["schema"]["type"]),
        (&"path".into(), &"integer".into()),
        "{id}"
    );
    let points = param("/api/flights/{id}", "points");
    assert_eq!(
        (&points["schema"]["minimum"], &points["schema"]["maximum"]),
        (&2.into(), &2000.into())
    );
    let recent = param("/api/callsigns/{callsign}", "recent");
    assert_eq!(recent["schema"]["maximum"], 100, "{recent}");
    let period = param("/api/leaderboards", "period");
    assert_eq!(
        period["schema"]["enum"],
        serde_json::json!(["7d", "30d", "all"])
    );
    assert_eq!(param("/api/airports", "limit")["schema"]["maximum"], 5000);
    assert_eq!(param("/api/chat", "limit")["schema"]["maximum"], 1000);
    assert_eq!(
        param("/api/servers/{addr}/history", "limit")["schema"]["maximum"],
        5000
    );
    let nat = param("/api/servers", "nat");
    assert_eq!(
        (
            &nat["schema"]["type"],
            &nat["schema"]["minimum"],
            &nat["schema"]["maximum"]
        ),
        (&"integer".into(), &0.into(), &1.into())
    );
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            for p in op["parameters"].as_array().into_iter().flatten() {
                assert!(
                    p["schema"]["type"].is_string() || p["schema"]["$ref"].is_string(),
                    "{method} {path}: an untyped parameter {p}"
                );
            }
        }
    }
    // Every reference names a component the document holds.
    let text = doc.to_string();
    for r in text.split("\"$ref\":\"").skip(1) {
        let target = r.split('"').next().unwrap();
        let name = target
            .strip_prefix("#/components/schemas/")
            .unwrap_or_else(|| panic!("{target}"));
        assert!(
            doc["components"]["schemas"].get(name).is_some(),
            "{target} is not in the document"
        );
    }
    // The documented fields are the served ones.
    let schema_fields = |name: &str| {
        let mut v: Vec<String> = doc["components"]["schemas"][name]["properties"]
            .as_object()
            .unwrap_or_else(|| panic!("schema {name}"))
            .keys()
            .cloned()
            .collect();
        v.sort();
        v
    };
    let served = |v: &Value| {
        let mut k: Vec<String> = v.as_object().unwrap().keys().cloned().collect();
        k.sort();
        k
    };
    let (_, relays) = json(http, "/api/relays");
    assert_eq!(schema_fields("RelaysBody"), served(&relays));
    assert_eq!(schema_fields("RelayInfo"), served(&relays["relay"]));
    let (_, servers) = json(http, "/api/servers");
    assert_eq!(schema_fields("ServersBody"), served(&servers));
    let (_, ready) = json(http, "/readyz");
    assert_eq!(schema_fields("ReadyBody"), served(&ready));
    assert_eq!(schema_fields("PartStatus"), served(&ready["parts"][0]));
    assert_eq!(schema_fields("Pilot").len(), 27);
    let (_, airports) = json(http, "/api/airports?limit=1");
    assert_eq!(schema_fields("AirportsBody"), served(&airports));
    assert_eq!(schema_fields("Airport"), served(&airports["airports"][0]));
    let (_, chat) = json(http, "/api/chat");
    assert_eq!(schema_fields("ChatBody"), served(&chat));
    let (_, atc) = json(http, "/api/atc");
    assert_eq!(schema_fields("AtcBody"), served(&atc));
    // The flight log's (served where a flight log runs: tests/tracker_link.rs reads
    // them back); the logbook's fields are documented.
    let flight = schema_fields("FlightEntry");
    for f in [
        "aircraft_name",
        "aircraft_class",
        "moving_s",
        "departure",
        "arrival",
    ] {
        assert!(flight.iter().any(|x| x == f), "{f} in {flight:?}");
    }
    assert_eq!(
        schema_fields("LeaderboardBody"),
        ["by", "generated_at", "leaders", "period", "since"]
    );
    assert_eq!(
        schema_fields("Leader"),
        ["callsign", "distance_nm", "flights", "hours", "rank"]
    );
    assert_eq!(
        schema_fields("AirportTotals"),
        ["arrivals", "departures", "ident", "name"]
    );
    assert!(schema_fields("CallsignBody")
        .iter()
        .any(|x| x == "airports"));
    let gpx = &doc["paths"]["/api/flights/{id}/gpx"]["get"]["responses"]["200"]["content"];
    assert!(gpx.get("application/gpx+xml").is_some(), "{gpx}");
}

/// `/api/servers` entries of `http`, by address.
fn servers_by_address(http: SocketAddr) -> std::collections::BTreeMap<String, Value> {
    let (code, body) = json(http, "/api/servers");
    assert_eq!(code, 200, "{body}");
    body["servers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["address"].as_str().unwrap().to_string(), s.clone()))
        .collect()
}

#[test]
fn listed_servers_get_the_names_they_answer_with() {
    let up = start("names");
    let http = up.addr("http", "tcp");
    let master = up.addr("master", "udp").to_string();
    // Two servers with a coloured name (the cleaned name is listed), one behind NAT
    // (never asked: it answers only after a NAT announce).
    let fleet = Lobby::start(
        &[
            "sim",
            "--master",
            &master,
            "--count",
            "2",
            "--hostname",
            "^1Red ^7Base\u{7}",
        ],
        2,
    );
    let nat = Lobby::start(
        &[
            "sim",
            "--master",
            &master,
            "--count",
            "1",
            "--nat",
            "--hostname",
            "Hidden",
        ],
        1,
    );
    let named: Vec<String> = fleet
        .addrs("sim", "udp")
        .iter()
        .map(|a| a.to_string())
        .collect();
    let hidden = nat.addr("sim", "udp").to_string();
    let deadline = Instant::now() + Duration::from_secs(20);
    let list = loop {
        let list = servers_by_address(http);
        if named
            .iter()
            .all(|a| list.get(a).is_some_and(|s| s["name"].is_string()))
            && list.contains_key(&hidden)
        {
            break list;
        }
        assert!(Instant::now() < deadline, "names never came: {list:?}");
        std::thread::sleep(Duration::from_millis(200));
    };
    let mut names: Vec<&str> = named
        .iter()
        .map(|a| list[a]["name"].as_str().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, ["Red Base #1", "Red Base #2"]);
    assert!(list[&hidden]["name"].is_null(), "{:?}", list[&hidden]);
    assert_eq!(list[&hidden]["nat"], true);
    fleet.stop();
    nat.stop();
}

#[test]
fn streams_are_capped_per_source_end_after_their_lifetime_and_free_the_connection() {
    // Issue 20, item 4: before, four sources could hold all 64 streams, a stream
    // lived as long as its client read, and a kept-alive connection that had carried
    // one stayed exempt from the idle timeout for ever.
    let up = start_with(
        "streamcap",
        "idle_timeout = 1\nmax_streams = 8\nmax_streams_per_ip = 2\nstream_lifetime = 2\n",
    );
    let http = up.addr("http", "tcp");
    let (mut first, first_head) = open_stream(http);
    assert!(first_head.starts_with("HTTP/1.1 200"), "{first_head}");
    let (_second, head) = open_stream(http);
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    let (_, third) = open_stream(http);
    assert!(
        third.starts_with("HTTP/1.1 503") && third.contains("from this address"),
        "{third}"
    );
    // Another source still gets one.
    let other = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    other
        .bind(&SocketAddr::from(([127, 0, 0, 2], 0)).into())
        .unwrap();
    other.connect(&http.into()).unwrap();
    let mut other: TcpStream = other.into();
    other
        .write_all(b"GET /api/pilots/stream HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    other
        .set_read_timeout(Some(Duration::from_secs(3)))
        .unwrap();
    let mut b = [0u8; 512];
    let n = other.read(&mut b).unwrap();
    assert!(
        b[..n].starts_with(b"HTTP/1.1 200"),
        "{}",
        String::from_utf8_lossy(&b[..n])
    );

    // The first stream ends after its 2 s (the chunked body's last chunk), and its
    // kept-alive connection is then closed by the 1 s idle timer.
    let t0 = Instant::now();
    let mut text = first_head;
    let mut ended = None;
    let mut closed = None;
    while t0.elapsed() < Duration::from_secs(8) && closed.is_none() {
        let mut b = [0u8; 65536];
        match first.read(&mut b) {
            Ok(0) => closed = Some(t0.elapsed()),
            Ok(n) => {
                text.push_str(&String::from_utf8_lossy(&b[..n]));
                if ended.is_none() && text.contains("\r\n0\r\n\r\n") {
                    ended = Some(t0.elapsed());
                }
            }
            Err(_) => {}
        }
    }
    let ended = ended.unwrap_or_else(|| panic!("the stream never ended: {text}"));
    assert!(ended < Duration::from_secs(4), "ended after {ended:?}");
    let closed =
        closed.unwrap_or_else(|| panic!("the connection stayed open after the stream: {text}"));
    assert!(
        closed - ended < Duration::from_secs(3),
        "closed {:?} after the stream",
        closed - ended
    );
}

#[test]
fn a_closed_stream_frees_its_slot_at_once() {
    // Issue 29, item 6: a stream the client closed kept its source's slot until a
    // keep-alive write failed (about 30 s), so the page's own reconnect after a
    // network blip was refused with 503.
    let up = start_with(
        "streamreopen",
        "max_streams = 8\nmax_streams_per_ip = 2\nstream_lifetime = 60\n",
    );
    let http = up.addr("http", "tcp");
    for round in 0..3 {
        let (a, head) = open_stream(http);
        assert!(head.starts_with("HTTP/1.1 200"), "round {round}: {head}");
        let (b, head) = open_stream(http);
        assert!(head.starts_with("HTTP/1.1 200"), "round {round}: {head}");
        drop((a, b)); // and reconnect at once
        std::thread::sleep(Duration::from_millis(200));
    }
    let (_a, head) = open_stream(http);
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    let (_b, head) = open_stream(http);
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    let (_, third) = open_stream(http);
    assert!(third.starts_with("HTTP/1.1 503"), "{third}");
}

#[test]
fn streams_are_never_closed_to_make_room_and_a_connection_past_the_cap_is_refused() {
    // Issue 20, item 5: at the connection cap the longest-waiting connection makes
    // room for a new one (tests/http.rs); a stream waits for nothing, so with every
    // place held by streams the next connection is refused.
    let up = start_with(
        "capstreams",
        "max_connections = 2\nstream_lifetime = 2\nidle_timeout = 1\n",
    );
    let http = up.addr("http", "tcp");
    let (a, head) = open_stream(http);
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    let (_b, head) = open_stream(http);
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    let asked = Instant::now();
    let refused = raw(http, "GET /stats HTTP/1.1\r\nHost: x\r\n\r\n");
    assert!(refused.starts_with("HTTP/1.1 503"), "{refused}");
    // Issue 30: a refusal is held a second, so a client that waits comes back slowly.
    assert!(asked.elapsed() >= Duration::from_secs(1), "refused at once");
    // Once the streams end (2 s) and their connections idle out (1 s), places free.
    drop(a);
    let deadline = Instant::now() + Duration::from_secs(10);
    let stats = loop {
        let r = raw(
            http,
            "GET /stats HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
        );
        if r.starts_with("HTTP/1.1 200") {
            break r;
        }
        assert!(
            Instant::now() < deadline,
            "never served after a stream closed: {r}"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(stats.contains("\"evicted_waiting\":0"), "{stats}");
    assert!(!stats.contains("\"refused_connection_cap\":0"), "{stats}");
}

/// One raw request's whole response.
fn raw(addr: SocketAddr, req: &str) -> String {
    let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(5)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    s.write_all(req.as_bytes()).unwrap();
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    String::from_utf8_lossy(&out).into_owned()
}

#[test]
fn the_page_is_sent_with_security_headers_and_a_validator() {
    // Issue 20, item 9: no Content-Security-Policy, nosniff or frame-ancestors, and
    // every load sent every byte again (no-cache without an ETag).
    let up = start("page");
    let http = up.addr("http", "tcp");
    for path in ["/", "/app.js", "/app.css"] {
        let r = raw(
            http,
            &format!("GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"),
        );
        let head = r.split("\r\n\r\n").next().unwrap().to_lowercase();
        assert!(head.starts_with("http/1.1 200"), "{head}");
        assert!(
            head.contains("content-security-policy: default-src 'self'")
                && head.contains("frame-ancestors 'none'"),
            "{head}"
        );
        assert!(head.contains("x-content-type-options: nosniff"), "{head}");
        let etag = head
            .lines()
            .find_map(|l| l.strip_prefix("etag: "))
            .unwrap_or_else(|| panic!("no etag: {head}"))
            .to_string();
        let again = raw(
            http,
            &format!("GET {path} HTTP/1.1\r\nHost: x\r\nIf-None-Match: {etag}\r\nConnection: close\r\n\r\n"),
        );
        assert!(again.starts_with("HTTP/1.1 304"), "{again}");
    }
}

/// One raw request's whole response, as bytes: (head, body).
fn raw_bytes(addr: SocketAddr, req: &str) -> (String, Vec<u8>) {
    let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(5)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    s.write_all(req.as_bytes()).unwrap();
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    let end = out.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
    let head = String::from_utf8_lossy(&out[..end]).to_lowercase();
    (head, out[end..].to_vec())
}

#[test]
fn the_page_is_sent_gzipped_to_clients_that_ask_and_nothing_else_is() {
    // Issue 20, item 9: the page's files went out uncompressed on every load. They
    // are gzipped now for clients that accept it; never for the others (the Xash3D
    // engine fails on any Content-Encoding), and never on the list routes.
    let up = start("gzip");
    let http = up.addr("http", "tcp");
    for path in ["/", "/app.js", "/app.css", "/land.json"] {
        let get = |extra: &str| {
            raw_bytes(
                http,
                &format!("GET {path} HTTP/1.1\r\nHost: x\r\n{extra}Connection: close\r\n\r\n"),
            )
        };
        let (plain_head, plain) = get("");
        assert!(!plain_head.contains("content-encoding"), "{plain_head}");
        let (head, gz) = get("Accept-Encoding: br, gzip;q=0.8, deflate\r\n");
        assert!(head.contains("content-encoding: gzip"), "{head}");
        assert!(head.contains("vary: accept-encoding"), "{head}");
        assert!(
            gz.len() < plain.len(),
            "{path}: {} >= {}",
            gz.len(),
            plain.len()
        );
        let mut unzip = std::process::Command::new("gzip")
            .arg("-dc")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        unzip.stdin.take().unwrap().write_all(&gz).unwrap();
        assert_eq!(unzip.wait_with_output().unwrap().stdout, plain, "{path}");
        let (refused, _) = get("Accept-Encoding: gzip;q=0\r\n");
        assert!(!refused.contains("content-encoding"), "{refused}");
        let etag = |h: &str| {
            h.lines()
                .find_map(|l| l.strip_prefix("etag: "))
                .map(str::to_string)
        };
        assert_ne!(
            etag(&head),
            etag(&plain_head),
            "each variant has its own validator"
        );
    }
    for path in ["/v1/gamedirs", "/api/servers", "/stats"] {
        let (head, _) = raw_bytes(
            http,
            &format!("GET {path} HTTP/1.1\r\nHost: x\r\nAccept-Encoding: gzip\r\nConnection: close\r\n\r\n"),
        );
        assert!(head.starts_with("http/1.1 200"), "{path}: {head}");
        assert!(!head.contains("content-encoding"), "{path}: {head}");
    }
}

/// A v2 position at `at` from `model` carrying `chat` and a transmit frequency.
fn fg_datagram(cs: &str, model: &str, at: (f64, f64), chat: &str, freq_hz: i32) -> Vec<u8> {
    use fgmp::message::{to_bytes, Message, Position};
    use fgmp::props::Protocol::V2;
    let mut body = Position::at(model, ecef(at.0, at.1));
    body.properties
        .push_int(10, 2, V2)
        .unwrap()
        .push_string(fgmp::props::CHAT_ID, chat.as_bytes(), V2)
        .unwrap()
        .push_int(fgmp::extras::FREQUENCY_ID, freq_hz, V2)
        .unwrap();
    to_bytes(&Message::position(
        fgmp::Callsign::new(cs).unwrap(),
        100,
        body,
    ))
    .unwrap()
}

#[test]
fn chat_once_frequency_and_atc_over_real_sockets() {
    let up = start("decode");
    let http = up.addr("http", "tcp");
    let relay = up.addrs("relay", "udp")[0];
    let (a, t) = (client(false), client(false));
    let (mut stream, head) = open_stream(http);
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    // FlightGear repeats a chat line in every datagram: ten times here, a tenth of a
    // second apart, with a control character the API strips.
    let said = fg_datagram(
        "ALPHA",
        "Aircraft/c172p/Models/c172p.xml",
        BIKF,
        "hello\x07 tower",
        118_500_000,
    );
    let tower = fg_datagram("BIKF_TW", "OpenRadar", north(BIKF, 1.0), "", 118_300_000);
    for _ in 0..10 {
        a.send_to(&said, relay).unwrap();
        t.send_to(&tower, relay).unwrap();
        std::thread::sleep(Duration::from_millis(100));
    }
    let deadline = Instant::now() + Duration::from_secs(5);
    let chat = loop {
        let (code, v) = json(http, "/api/chat");
        assert_eq!(code, 200, "{v}");
        if !v["lines"].as_array().unwrap().is_empty() {
            break v;
        }
        assert!(Instant::now() < deadline, "no chat line: {v}");
        std::thread::sleep(Duration::from_millis(200));
    };
    // Keep sending for more than one snapshot: still one line.
    for _ in 0..15 {
        a.send_to(&said, relay).unwrap();
        std::thread::sleep(Duration::from_millis(100));
    }
    let (_, chat2) = json(http, "/api/chat?callsign=ALPHA");
    for v in [&chat, &chat2] {
        let lines = v["lines"].as_array().unwrap();
        assert_eq!(lines.len(), 1, "the line once: {v}");
        assert_eq!(lines[0]["callsign"], "ALPHA");
        assert_eq!(lines[0]["text"], "hello tower");
        assert_eq!(lines[0]["frequency_mhz"], 118.5);
    }
    let (code, metrics) = http_get(http, "/metrics");
    assert_eq!(code, 200);
    assert!(
        metrics.contains("lobby_chat_lines_total{outcome=\"recorded\"} 1\n"),
        "{metrics}"
    );
    assert!(metrics.contains("lobby_chat_lines_kept 1\n"), "{metrics}");
    let (_, none) = json(http, "/api/chat?near=0,0,10");
    assert!(none["lines"].as_array().unwrap().is_empty(), "{none}");
    let (_, v) = json(http, "/api/pilots?callsign=ALPHA");
    let p = &v["pilots"][0];
    assert_eq!(p["frequency_mhz"], 118.5, "{p}");
    assert_eq!(p["protocol"], 2);
    assert_eq!(p["atc"], false);
    assert_eq!(p["chat"], "hello tower");
    assert_eq!(p["class"], "single_prop");
    assert_eq!(p["aircraft_name"], "Cessna 172P Skyhawk");
    let (_, v) = json(http, "/api/atc");
    let st = v["stations"].as_array().unwrap();
    assert_eq!(st.len(), 1, "{v}");
    assert_eq!(st[0]["callsign"], "BIKF_TW");
    assert_eq!(st[0]["airport"], "BIKF");
    assert_eq!(st[0]["airport_name"], "Keflavik International Airport");
    assert_eq!(st[0]["position"], "TW");
    assert_eq!(st[0]["frequency_mhz"], 118.3);
    let (_, v) = json(http, "/api/pilots?callsign=BIKF_TW");
    assert_eq!(v["pilots"][0]["atc"], true, "{v}");
    assert_eq!(v["pilots"][0]["class"], "atc", "{v}");
    let (code, _) = json(http, "/api/chat?limit=0");
    assert_eq!(code, 400);
    // The stream carried the line once, as a `chat` event.
    let mut text = head;
    let deadline = Instant::now() + Duration::from_secs(3);
    while Instant::now() < deadline {
        let mut b = [0u8; 65536];
        if let Ok(n) = stream.read(&mut b) {
            if n == 0 {
                break;
            }
            text.push_str(&String::from_utf8_lossy(&b[..n]));
        }
    }
    let chats: Vec<&str> = text
        .split("\n\n")
        .filter(|e| e.contains("event: chat"))
        .collect();
    assert_eq!(chats.len(), 1, "{text}");
    assert!(chats[0].contains("\"text\":\"hello tower\""), "{text}");
}

#[test]
fn airports_by_area_and_by_ident_over_http() {
    let up = start("airports");
    let http = up.addr("http", "tcp");
    let (code, v) = json(http, "/api/airports?bbox=-23,63.5,-21.5,64.5&min=medium");
    assert_eq!(code, 200, "{v}");
    let idents: Vec<&str> = v["airports"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["ident"].as_str().unwrap())
        .collect();
    assert_eq!(
        idents.first(),
        Some(&"BIKF"),
        "the large one first: {idents:?}"
    );
    assert!(idents.contains(&"BIRK"), "Reykjavik: {idents:?}");
    assert_eq!(v["truncated"], false);
    let (code, a) = json(http, "/api/airports/bikf");
    assert_eq!(code, 200);
    assert_eq!(a["ident"], "BIKF");
    assert_eq!(a["kind"], "large");
    assert_eq!(a["country"], "IS");
    let (code, e) = json(http, "/api/airports/QQQQ");
    assert_eq!(code, 404);
    assert!(e["error"].as_str().unwrap().contains("QQQQ"), "{e}");
    // Across the antimeridian: Fiji's Nadi (NFFN, 177.4 E) in a box from 177 E to 170 W.
    let (_, v) = json(http, "/api/airports?bbox=177,-19,-170,-17&min=medium");
    assert!(
        v["airports"]
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a["ident"] == "NFFN"),
        "{v}"
    );
    for bad in ["bbox=1,2,3", "min=huge", "limit=0", "zoom=4"] {
        let (code, e) = json(http, &format!("/api/airports?{bad}"));
        assert_eq!(code, 400, "{bad}: {e}");
    }
    let head = raw(
        http,
        "GET /api/airports?limit=1 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    );
    assert!(
        head.to_ascii_lowercase()
            .contains("cache-control: public, max-age=3600"),
        "{head}"
    );
}

#[test]
fn the_api_takes_at_most_one_snapshot_a_second_however_often_it_is_read() {
    // A pilot moving every 50 ms and /api/pilots read every 20 ms for 2 s: the answers
    // change only with a new snapshot, so 3 different bodies (the one before, one a
    // second; 4 allowed for a slow machine), not one per read.
    let l = start_with("snapshot-interval", "");
    let (http, relay) = (l.addr("http", "tcp"), l.addr("relay", "udp"));
    let pilot = client(false);
    let stop = std::sync::atomic::AtomicBool::new(false);
    let bodies = std::thread::scope(|s| {
        s.spawn(|| {
            let mut at = BIKF;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                at = north(at, 0.01);
                pilot.send_to(&pos("MOVER", at, 100), relay).unwrap();
                std::thread::sleep(Duration::from_millis(50));
            }
        });
        let deadline = Instant::now() + Duration::from_secs(5);
        while !http_get(http, "/api/pilots").1.contains("MOVER") {
            assert!(Instant::now() < deadline, "never shown\n{}", l.stderr());
            std::thread::sleep(Duration::from_millis(50));
        }
        let mut bodies = std::collections::BTreeSet::new();
        let (t, mut reads) = (Instant::now(), 0);
        while t.elapsed() < Duration::from_secs(2) {
            let (code, body) = http_get(http, "/api/pilots");
            assert_eq!(code, 200, "{body}");
            bodies.insert(body);
            reads += 1;
            std::thread::sleep(Duration::from_millis(20));
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        assert!(reads > 30, "{reads} reads");
        bodies
    });
    assert!(
        (2..=4).contains(&bodies.len()),
        "{} different answers in 2 s",
        bodies.len()
    );
}

/// The `id:` of every event in an event stream's text, in order, with its event name.
fn event_ids(text: &str) -> Vec<(String, u64)> {
    let mut out = Vec::new();
    let mut name = String::new();
    for line in text.lines() {
        if let Some(n) = line.strip_prefix("event: ") {
            name = n.to_string();
        } else if let Some(id) = line.strip_prefix("id: ") {
            if let Ok(id) = id.trim().parse() {
                out.push((name.clone(), id));
            }
        }
    }
    out
}

#[test]
fn a_stream_reader_more_than_eight_updates_behind_has_its_stream_ended() {
    // `http::snapshot::STREAM_BACKLOG`: a stream's updates wait for its reader in a
    // ring of 8. 500 pilots whose model is 95 control characters (six bytes each in
    // JSON: a snapshot of some 1.1 MB) and one moving (an update a second). A narrow
    // client reads its stream at 16 KB a second (so the write timeout never fires)
    // while another reads at full speed. Hyper holds the unsent snapshot (past its
    // 400 KB buffer it polls the stream no more), so the slow stream's updates wait
    // in the ring; once ten more have gone by, the slow reader catches up: its
    // stream has ended (the chunked body's last chunk) after its snapshot, and the
    // page's EventSource would start over from a new one. Without the bound it would
    // get every update it missed and go on.
    use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
    use std::sync::Mutex;
    let up = start_up("backlog", "max_pilots_per_ip = 1000\n", "");
    let (http, relay) = (up.addr("http", "tcp"), up.addrs("relay", "udp")[0]);
    let stop = AtomicBool::new(false);
    let fast_ids: Mutex<Vec<u64>> = Mutex::new(Vec::new());
    std::thread::scope(|sc| {
        sc.spawn(|| {
            use fgmp::message::{to_bytes, Message, Position};
            let model = "\u{1}".repeat(95);
            let dgram = |cs: &str, at: (f64, f64)| {
                let p = Position::at(&model, ecef(at.0, at.1));
                to_bytes(&Message::position(fgmp::Callsign::new(cs).unwrap(), 1, p)).unwrap()
            };
            // 18 nm apart, ranges of 1 nm: nobody is sent anybody's position.
            let still: Vec<(std::net::UdpSocket, Vec<u8>)> = (0..500)
                .map(|i| {
                    let at = (-80.0 + f64::from(i) * 0.3, 10.0);
                    (client(false), dgram(&format!("P{i:03}"), at))
                })
                .collect();
            let mover = client(false);
            let mut at = BIKF;
            let t0 = Instant::now();
            let mut round = 0u64;
            while !stop.load(Relaxed) && t0.elapsed() < Duration::from_secs(90) {
                if round.is_multiple_of(20) {
                    for (s, d) in &still {
                        s.send_to(d, relay).unwrap();
                    }
                }
                at = north(at, 0.01);
                mover.send_to(&dgram("MOVER", at), relay).unwrap();
                round += 1;
                std::thread::sleep(Duration::from_millis(100));
            }
        });
        let deadline = Instant::now() + Duration::from_secs(20);
        let size = loop {
            let (code, body) = http_get(http, "/api/pilots");
            let online = serde_json::from_str::<Value>(&body)
                .map_or(0, |v| v["online"].as_u64().unwrap_or(0));
            if code == 200 && online == 501 {
                break body.len();
            }
            assert!(
                Instant::now() < deadline,
                "{online} pilots online\n{}",
                up.stderr()
            );
            std::thread::sleep(Duration::from_millis(200));
        };
        assert!(size > 900_000, "a snapshot of {size} bytes");
        // The fast reader notes every event id it gets.
        sc.spawn(|| {
            let (mut s, _) = open_stream(http);
            let mut text = String::new();
            let t0 = Instant::now();
            while !stop.load(Relaxed) && t0.elapsed() < Duration::from_secs(90) {
                let mut b = [0u8; 65536];
                if let Ok(n) = s.read(&mut b) {
                    if n == 0 {
                        break;
                    }
                    text.push_str(&String::from_utf8_lossy(&b[..n]));
                    *fast_ids.lock().unwrap() = event_ids(&text).into_iter().map(|e| e.1).collect();
                }
            }
        });
        let mut slow = narrow_client(http);
        slow.write_all(b"GET /api/pilots/stream HTTP/1.1\r\nHost: x\r\n\r\n")
            .unwrap();
        slow.set_read_timeout(Some(Duration::from_millis(50)))
            .unwrap();
        let mut text = Vec::new();
        let mut b = [0u8; 65536];
        // 4 KB every 250 ms until the fast reader has seen ten updates after the
        // slow stream's snapshot.
        let opened = Instant::now();
        let behind = |text: &[u8]| {
            let first = event_ids(&String::from_utf8_lossy(text))
                .first()
                .map(|e| e.1)?;
            Some(
                fast_ids
                    .lock()
                    .unwrap()
                    .iter()
                    .filter(|&&id| id > first)
                    .count(),
            )
        };
        while behind(&text).is_none_or(|n| n < 10) {
            assert!(
                opened.elapsed() < Duration::from_secs(40),
                "updates stopped: {:?}\n{}",
                behind(&text),
                up.stderr()
            );
            if let Ok(n) = slow.read(&mut b[..4096]) {
                assert!(n > 0, "the slow stream was closed");
                text.extend_from_slice(&b[..n]);
            }
            std::thread::sleep(Duration::from_millis(250));
        }
        let trickled = (opened.elapsed(), text.len());
        // Catching up: everything left, until the body's last chunk (or 10 s).
        let caught_up = Instant::now();
        while !text.ends_with(b"\r\n0\r\n\r\n") && caught_up.elapsed() < Duration::from_secs(10) {
            match slow.read(&mut b) {
                Ok(0) => break,
                Ok(n) => text.extend_from_slice(&b[..n]),
                Err(_) => {}
            }
        }
        stop.store(true, Relaxed);
        let events = event_ids(&String::from_utf8_lossy(&text));
        let missed = behind(&text).unwrap();
        eprintln!(
            "trickled {} bytes in {:?}; then {} bytes, {} events {:?}; the fast reader saw {missed} updates since",
            trickled.1,
            trickled.0,
            text.len() - trickled.1,
            events.len(),
            events.iter().map(|e| &e.0).collect::<Vec<_>>()
        );
        let log = |up: &Lobby| {
            let l = up.stderr();
            l.lines()
                .filter(|l| l.contains("HTTP"))
                .collect::<Vec<_>>()
                .join("\n")
        };
        assert!(
            text.ends_with(b"\r\n0\r\n\r\n"),
            "the stream {missed} updates behind went on: {} events, {} bytes\n{}",
            events.len(),
            text.len(),
            log(&up)
        );
        let (_, st) = json(http, "/stats");
        assert_eq!(
            st["http"]["idle_timeouts"], 0,
            "cut by the write timeout, not the backlog: {st}"
        );
        assert_eq!(events.first().map(|e| e.0.as_str()), Some("snapshot"));
        assert!(events.len() < missed, "{events:?}");
    });
}
