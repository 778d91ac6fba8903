//! The relay's link to a tracker, as fgms 0.13.10 reports (`tracker::client` holds
//! the protocol; this is its TCP driver and the reporter feeding it).
//!
//! - **Reporter**: the `pilot_feed` batches become lines: `CONNECT` when a local
//!   pilot's session begins, `DISCONNECT` when it ends (with the times they
//!   happened), and every 10 s one `POSITION` line per local pilot (heading, pitch
//!   and roll from its own orientation, not fgms's previous-position bug), at most
//!   [`POSITION_LINES`] lines per message. Forwarding never waits for the tracker.
//! - **Queue**: `tracker::client::Client` keeps at most `tracker_max_queue` messages
//!   (newer ones dropped and counted) and 25 unacknowledged; on stop its backlog is
//!   written to `tracker_queue_file` and read back at the next start, as fgms's
//!   `queue_file`. A flooding pilot cannot fill it: the feed passes on a share of its
//!   sessions (`crate::services::feed`), its positions are a line every 10 s.
//! - **Connection**: the tracker's name is resolved at every attempt (an address
//!   that changes is followed; a name that does not resolve is retried, logged and
//!   counted); connects and writes time out; reconnects follow the client's timing
//!   (30 s), as fgms.

use crate::services::feed::{Batch, PilotFix, Session};
use anyhow::{Context, Result};
use config::TrackerOptions;
use lifecycle::Stop;
use std::path::Path;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::mpsc;
use tracker::client::{Client, ClientConfig};
use tracker::message::{model_name, Line};

/// fgms's password field: always this literal.
const PASSWD: &str = "test";
/// POSITION lines per message, at most (fgms joins every pilot into one message;
/// lobby splits them so one message stays small; each is acknowledged on its own).
pub const POSITION_LINES: usize = 500;
/// A connection attempt, and a write, give up after this.
const IO_TIMEOUT: Duration = Duration::from_secs(10);

/// The CONNECT/DISCONNECT line of one session.
pub fn session_line(s: &Session) -> Line {
    Line::session(
        s.began,
        s.callsign.clone(),
        PASSWD.to_string(),
        model_name(&s.model),
        s.at,
    )
}

/// The POSITION line of one local pilot (degrees, feet).
pub fn position_line(p: &PilotFix) -> Line {
    Line::Position {
        callsign: p.callsign.clone(),
        passwd: PASSWD.into(),
        lat: p.lat,
        lon: p.lon,
        alt_ft: p.alt_ft,
        heading: p.heading,
        pitch: p.pitch,
        roll: p.roll,
        time: p.at,
    }
}

/// The messages of one feed batch: sessions one line each, then positions joined
/// by `\n`, [`POSITION_LINES`] per message.
pub fn messages(b: &Batch) -> Vec<String> {
    let mut out: Vec<String> = b
        .sessions
        .iter()
        .map(|s| session_line(s).encode())
        .collect();
    if let Some(p) = &b.positions {
        out.extend(p.chunks(POSITION_LINES).map(|chunk| {
            chunk
                .iter()
                .map(|p| position_line(p).encode())
                .collect::<Vec<_>>()
                .join("\n")
        }));
    }
    out
}

/// Reads a queue file ([`tracker::queue`]'s format). A missing file is an empty
/// backlog.
pub fn load_queue(path: &Path) -> Result<Vec<String>> {
    match std::fs::read(path) {
        Ok(bytes) => Ok(tracker::queue::decode(&bytes)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(e) => Err(e).with_context(|| format!("cannot read tracker queue {}", path.display())),
    }
}

/// Writes a queue file atomically ([`udp::atomic_write`]).
pub fn save_queue(path: &Path, msgs: &[String]) -> Result<()> {
    udp::atomic_write(path, &tracker::queue::encode(msgs))
        .with_context(|| format!("cannot write tracker queue {}", path.display()))
}

/// Copies the client's counters into the relay's (the telnet `# stats:` line,
/// `/stats`, `/metrics`).
fn publish(client: &Client, stats: &relay::Stats) {
    let s = client.stats();
    stats.tracker_queued.store(s.queued, Relaxed);
    stats.tracker_acked.store(s.acked, Relaxed);
    stats.tracker_dropped.store(s.dropped_queue_full, Relaxed);
    stats.tracker_reconnects.store(s.reconnects, Relaxed);
    stats
        .tracker_backlog
        .store((s.pending + s.in_flight) as u64, Relaxed);
    stats
        .tracker_connected
        .store(u64::from(s.identified), Relaxed);
}

/// Runs the tracker link until the stop signal, then saves the backlog.
pub async fn run(
    mut feed: mpsc::Receiver<Arc<Batch>>,
    stats: Arc<relay::Stats>,
    opts: TrackerOptions,
    stop: Stop,
) -> Result<()> {
    let now = Instant::now();
    let cfg = ClientConfig {
        version: format!("lobby-{}", env!("CARGO_PKG_VERSION")),
        fqdn: opts.fqdn.clone(),
        server_name: opts.server_name.clone(),
        max_queue: opts.max_queue,
        secret: opts.secret.clone(),
        ..ClientConfig::default()
    };
    let mut client = Client::new(cfg, now);
    if let Some(p) = &opts.queue_file {
        match load_queue(p) {
            Ok(msgs) if !msgs.is_empty() => {
                tracing::info!(file = %p.display(), messages = msgs.len(), "tracker queue restored");
                client.restore(msgs);
            }
            Ok(_) => {}
            Err(e) => tracing::warn!("{e:#}; starting with an empty tracker queue"),
        }
    }
    loop {
        // Not connected: queue what comes until it is time to try again.
        if !client.wants_connect(Instant::now()) {
            let wake = client
                .poll_timeout()
                .unwrap_or_else(|| Instant::now() + Duration::from_secs(1));
            tokio::select! {
                Some(b) = feed.recv() => {
                    for m in messages(&b) {
                        client.push(m);
                    }
                }
                _ = tokio::time::sleep_until(wake.into()) => client.handle_timeout(Instant::now()),
                _ = stop.stopped() => break,
            }
            publish(&client, &stats);
            continue;
        }
        let sock = tokio::select! {
            r = connect(&opts.target) => r,
            _ = stop.stopped() => break,
        };
        match sock {
            Ok(sock) => {
                tracing::info!(tracker = %opts.target, "tracker connected");
                client.connected(Instant::now());
                let end = serve(sock, &mut client, &mut feed, &stats, &stop).await;
                match end {
                    Ok(()) if stop.is_raised() => break,
                    Ok(()) => {
                        tracing::warn!(tracker = %opts.target, "tracker link closed (silent or refused); reconnecting")
                    }
                    Err(e) => {
                        tracing::warn!(tracker = %opts.target, "tracker link failed: {e:#}; reconnecting")
                    }
                }
            }
            Err(e) => tracing::warn!(tracker = %opts.target, "cannot reach the tracker: {e:#}"),
        }
        client.disconnected(Instant::now());
        publish(&client, &stats);
    }
    publish(&client, &stats);
    if let Some(p) = &opts.queue_file {
        let backlog = client.backlog();
        match save_queue(p, &backlog) {
            Ok(()) => {
                tracing::info!(file = %p.display(), messages = backlog.len(), "tracker queue saved")
            }
            Err(e) => tracing::error!("{e:#}"),
        }
    }
    Ok(())
}

/// Resolves `target` now and connects to its first address that answers.
async fn connect(target: &str) -> Result<TcpStream> {
    let addrs: Vec<_> = tokio::time::timeout(IO_TIMEOUT, tokio::net::lookup_host(target))
        .await
        .context("name resolution timed out")?
        .with_context(|| format!("cannot resolve {target:?}"))?
        .collect();
    let mut last = anyhow::anyhow!("{target:?} resolved to no address");
    for a in addrs {
        match tokio::time::timeout(IO_TIMEOUT, TcpStream::connect(a)).await {
            Ok(Ok(s)) => {
                let _ = s.set_nodelay(true);
                return Ok(s);
            }
            Ok(Err(e)) => last = anyhow::Error::new(e).context(format!("connect to {a}")),
            Err(_) => last = anyhow::anyhow!("connect to {a} timed out"),
        }
    }
    Err(last)
}

/// Moves bytes between the socket and the client until the client wants to close,
/// the peer closes, an error, or the stop signal (`Ok` then).
async fn serve(
    mut sock: TcpStream,
    client: &mut Client,
    feed: &mut mpsc::Receiver<Arc<Batch>>,
    stats: &relay::Stats,
    stop: &Stop,
) -> Result<()> {
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        while let Some(bytes) = client.poll_transmit() {
            tokio::time::timeout(IO_TIMEOUT, sock.write_all(&bytes))
                .await
                .context("write timed out")?
                .context("write failed")?;
        }
        publish(client, stats);
        if client.wants_close() {
            return Ok(());
        }
        let wake = client
            .poll_timeout()
            .unwrap_or_else(|| Instant::now() + Duration::from_secs(1));
        tokio::select! {
            r = sock.read(&mut buf) => match r.context("read failed")? {
                0 => anyhow::bail!("the tracker closed the connection"),
                n => client.received(&buf[..n], Instant::now()),
            },
            _ = tokio::time::sleep_until(wake.into()) => client.handle_timeout(Instant::now()),
            Some(b) = feed.recv() => {
                for m in messages(&b) {
                    client.push(m);
                }
            }
            _ = stop.stopped() => return Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tracker::message::format_time;

    #[test]
    fn batches_become_fgms_lines_with_positions_split_into_messages() {
        let began = Session {
            began: true,
            callsign: "TEST1".into(),
            model: "Aircraft/c172p/Models/c172p.xml".into(),
            at: 1_796_155_197,
            source: Some("192.0.2.1".into()),
        };
        assert_eq!(
            session_line(&began).encode(),
            format!("CONNECT TEST1 test c172p {}", format_time(1_796_155_197))
        );
        let ended = Session {
            began: false,
            ..began.clone()
        };
        assert!(session_line(&ended)
            .encode()
            .starts_with("DISCONNECT TEST1 test c172p "));
        let p = PilotFix {
            callsign: "TEST1".into(),
            model: "Aircraft/c172p/Models/c172p.xml".into(),
            lat: 63.985,
            lon: -22.605,
            alt_ft: 1000.0,
            heading: 280.0,
            pitch: 2.0,
            roll: -5.0,
            at: 1_796_155_200,
        };
        let line = position_line(&p).encode();
        assert!(line.starts_with("POSITION TEST1 test 63.985"), "{line}");
        assert_eq!(line.split(' ').count(), 11, "{line}");
        // 1,001 pilots: three messages of at most 500 lines, after the sessions.
        let b = Batch {
            sessions: vec![began, ended],
            positions: Some(vec![p; 1001]),
        };
        let m = messages(&b);
        let lines: Vec<usize> = m.iter().map(|x| x.lines().count()).collect();
        assert_eq!(lines, [1, 1, 500, 500, 1]);
    }

    #[test]
    fn the_queue_file_is_read_back_and_a_missing_one_is_empty() {
        let dir = std::env::temp_dir().join(format!("lobby-tq-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("queue");
        assert!(load_queue(&f).unwrap().is_empty(), "no file: empty");
        let msgs = vec!["POSITION a\nPOSITION b".to_string()];
        save_queue(&f, &msgs).unwrap();
        assert_eq!(load_queue(&f).unwrap(), msgs);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
