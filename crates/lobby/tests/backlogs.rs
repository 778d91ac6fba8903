//! Bounds on what waits for a slow consumer, shown on the library's own parts driven
//! in-process, where a whole `lobby` process would need minutes to show them (the
//! pilot feed's batches come once a second) or has no way to make its consumer slow
//! on cue (the flight log's writer). Each test names the bound it shows.

use lifecycle::{Stop, Supervisor};
use lobby::http::snapshot::Publisher;
use lobby::http::sources::Sources;
use lobby::services::feed::{self, Batch, SUBSCRIBER_BACKLOG};
use lobby::services::history::{History, Input};
use std::net::SocketAddr;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::mpsc;

fn relay_engine() -> Arc<Mutex<relay::Engine>> {
    Arc::new(Mutex::new(relay::Engine::new(
        relay::Config::default(),
        Arc::new(relay::Stats::default()),
    )))
}

/// A position datagram of `cs` at BIKF.
fn position(cs: &str) -> Vec<u8> {
    use fgmp::geo::{to_ecef, Geodetic};
    use fgmp::message::{to_bytes, Message, Position};
    let at = to_ecef(Geodetic {
        lat_deg: 63.985,
        lon_deg: -22.605,
        alt_m: 300.0,
    });
    let body = Position::at("Aircraft/c172p/Models/c172p.xml", at);
    to_bytes(&Message::position(
        fgmp::Callsign::new(cs).unwrap(),
        100,
        body,
    ))
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn api_snapshots_are_taken_only_while_someone_reads_or_a_relay_samples_its_chat() {
    // `http::snapshot`: the API's snapshots copy every engine's state; the publisher's
    // loop takes one a second while a stream is open, one every 2 s while a relay runs
    // (its chat log sees every line, each carried about 10 s), and none otherwise: a
    // request then takes its own. Three publishers left alone for 5 s.
    let bare = Publisher::new(Sources::default(), 4, 2, Duration::from_secs(60));
    let with_relay = |engine| Sources {
        relay: Some(engine),
        ..Sources::default()
    };
    let relay = Publisher::new(with_relay(relay_engine()), 4, 2, Duration::from_secs(60));
    let streamed = Publisher::new(with_relay(relay_engine()), 4, 2, Duration::from_secs(60));
    let (_slot, _rx) = streamed
        .open_stream(std::net::Ipv4Addr::LOCALHOST.into())
        .await
        .unwrap();
    let stop = Stop::new();
    let tasks: Vec<_> = [&bare, &relay, &streamed]
        .into_iter()
        .map(|p| tokio::spawn(p.clone().run(stop.clone())))
        .collect();
    tokio::time::sleep(Duration::from_secs(5)).await;
    let seq = |p: Arc<Publisher>| async move { p.current().await.seq };
    let (bare_n, relay_n, streamed_n) = (
        seq(bare.clone()).await,
        seq(relay.clone()).await,
        seq(streamed.clone()).await,
    );
    stop.raise();
    for t in tasks {
        t.await.unwrap().unwrap();
    }
    eprintln!("in 5 s: {bare_n} (no relay, nobody reading), {relay_n} (a relay), {streamed_n} (a stream open), the read's own included");
    assert_eq!(bare_n, 1, "snapshots taken while nobody read");
    assert!(
        (2..=4).contains(&relay_n),
        "{relay_n} with a relay: one every 2 s"
    );
    assert!(
        (4..=7).contains(&streamed_n),
        "{streamed_n} with a stream: one a second"
    );
}

#[tokio::test(start_paused = true)]
async fn a_feed_subscriber_that_falls_behind_keeps_64_batches_and_the_others_get_every_one() {
    // `services::feed::SUBSCRIBER_BACKLOG`: the relay's pilot feed hands each batch to
    // every subscriber (the tracker link, the flight log) through a channel of 64; one
    // that takes nothing loses every batch past them, counted in
    // `relay.feed_batches_dropped`, and never slows the feed: the subscriber that reads
    // gets all of them. 100 pilots begin, one a second (paused time), each from its
    // own address (so the session share passes them all).
    let engine = relay_engine();
    let stats = engine.lock().unwrap().stats().clone();
    let (stalled, held) = mpsc::channel::<Arc<Batch>>(SUBSCRIBER_BACKLOG);
    let (reading, mut rx) = mpsc::channel::<Arc<Batch>>(SUBSCRIBER_BACKLOG);
    let stop = Stop::new();
    let feed = tokio::spawn(feed::run(
        engine.clone(),
        vec![stalled, reading],
        stop.clone(),
    ));
    let reader = tokio::spawn(async move {
        let mut sessions = Vec::new();
        while let Some(b) = rx.recv().await {
            sessions.extend(b.sessions.iter().map(|s| s.callsign.clone()));
        }
        sessions
    });
    // Between the feed's takes (every second from 0 s): one pilot each.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let mut out = relay::Outbox::new();
    for i in 0..100u8 {
        let from = SocketAddr::from(([10, 1, i, 1], 5000));
        engine.lock().unwrap().handle(
            &position(&format!("P{i:03}")),
            from,
            Instant::now(),
            &mut out,
        );
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    stop.raise();
    tokio::time::timeout(Duration::from_secs(5), feed)
        .await
        .expect("the feed waits for its stalled subscriber")
        .unwrap()
        .unwrap();
    let sessions = reader.await.unwrap();
    let dropped = stats.feed_batches_dropped.load(Relaxed);
    eprintln!(
        "{} sessions read, {} batches held for the stalled subscriber, {dropped} dropped",
        sessions.len(),
        held.len()
    );
    assert_eq!(
        sessions.len(),
        100,
        "the reading subscriber got every pilot"
    );
    assert_eq!(held.len(), 64, "held for the stalled one");
    assert_eq!(dropped, 100 - 64, "batches past the 64 dropped and counted");
}

#[tokio::test]
async fn a_full_writer_queue_drops_server_samples_and_counts_them() {
    // `[history] queue` (4,096 inputs, the default) for the master's server samples
    // (`History::send(Input::Servers)`, what the sampler calls every
    // `server_sample_interval`): 5,000 inputs of two samples each sent while the
    // writer cannot run (this test holds the one thread): 4,096 wait, the other 904
    // are dropped and their 1,808 samples counted in `history.server_samples_dropped`.
    let dir = std::env::temp_dir().join(format!("lobby-backlogs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = config::parse(
        &format!(
            "[history]\ndatabase_url = \"sqlite:{}\"\n",
            dir.join("h.sqlite").display()
        ),
        "test",
    )
    .unwrap();
    let opts = f.history.options().unwrap().unwrap();
    assert_eq!(opts.queue, 4096);
    let sup = Supervisor::new();
    let h = History::start(&sup, opts).await.unwrap();
    let sample = |i: usize| flightlog::store::ServerSample {
        address: format!("192.0.2.{}:27015", i % 250),
        gamedir: "valve".into(),
        name: None,
        at: 1_796_155_200,
        players: 1,
        max: 32,
        map: "crossfire".into(),
    };
    for i in 0..5000 {
        h.send(Input::Servers(vec![sample(i), sample(i + 1)]));
    }
    let dropped = h.stats.server_samples_dropped.load(Relaxed);
    assert_eq!(
        dropped,
        2 * (5000 - 4096),
        "samples of the inputs past 4,096"
    );
    assert_eq!(h.stats.reports_dropped.load(Relaxed), 0);
    sup.stop().raise();
    let _ = std::fs::remove_dir_all(&dir);
}
