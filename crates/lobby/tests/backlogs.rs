//! Bounds on what waits for a slow consumer, shown on the library's own parts driven
//! in-process, where a whole `lobby` process would need minutes to show them (the
//! pilot feed's batches come once a second) or has no way to make its consumer slow
//! on cue (the flight log's writer). Each test names the bound it shows.

use lifecycle::Stop;
use lobby::http::snapshot::Publisher;
use lobby::http::sources::Sources;
use std::sync::{Arc, Mutex};
use std::time::Duration;

fn relay_engine() -> Arc<Mutex<relay::Engine>> {
    Arc::new(Mutex::new(relay::Engine::new(
        relay::Config::default(),
        Arc::new(relay::Stats::default()),
    )))
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
