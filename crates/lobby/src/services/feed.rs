//! What the relay's local pilots do, for whoever records it: the tracker link and
//! the flight log. One task takes the relay engine's session events every second
//! and its local pilots' positions every 10 s (the engine's lock held only to
//! copy), turns them into wall-clock times and geodetic fixes once, and hands each
//! batch to every subscriber through a bounded channel: a subscriber that falls
//! behind loses batches (counted), never slows the relay.
//! A pilot flipping its model or callsign begins a session at each datagram: only
//! a share of each pilot's and address's sessions goes on
//! ([`flightlog::share::SessionShare`]; the rest counted as shed).

use lifecycle::{lock, Stop};
pub use relay::feed::{fix, session, unix_at, Batch, PilotFix, Session};
use relay::Engine;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::mpsc;

/// How often session events are taken.
pub const SESSIONS_EVERY: Duration = Duration::from_secs(1);
/// How often every local pilot's position is taken (fgms reports every 10 s).
pub const POSITIONS_EVERY: Duration = Duration::from_secs(10);
/// Session events the engine keeps between two takes.
const SESSION_LOG: usize = 100_000;
/// Batches a subscriber may have waiting.
pub const SUBSCRIBER_BACKLOG: usize = 64;

/// Takes from `engine` until the stop signal and hands the batches to `subscribers`.
pub async fn run(
    engine: Arc<Mutex<Engine>>,
    subscribers: Vec<mpsc::Sender<Arc<Batch>>>,
    stop: Stop,
) -> anyhow::Result<()> {
    let stats = lock(&engine).stats().clone();
    lock(&engine).record_sessions(Some(SESSION_LOG), Instant::now());
    let mut tick = tokio::time::interval(SESSIONS_EVERY);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut next_positions = Instant::now() + POSITIONS_EVERY;
    let (mut events, mut positions) = (Vec::new(), Vec::new());
    let mut share = flightlog::share::SessionShare::default();
    loop {
        tokio::select! {
            _ = tick.tick() => {}
            _ = stop.stopped() => break,
        }
        let now = Instant::now();
        let due = now >= next_positions;
        {
            let mut e = lock(&engine);
            e.take_sessions(&mut events);
            if due {
                e.local_positions(&mut positions);
            }
        }
        if events.is_empty() && !due {
            continue;
        }
        let unix = udp::time::unix_secs_f64();
        let secs = unix.floor() as i64;
        let sessions: Vec<Session> = events
            .drain(..)
            .map(|e| session(&e, now, unix))
            .filter(|s| match (s.began, &s.source) {
                (true, Some(src)) => share.began(src, &s.callsign, secs),
                _ => share.ended(&s.callsign),
            })
            .inspect(|s| tracing::debug!(session = ?s, "pilot session"))
            .collect();
        share.prune(secs);
        stats.session_events_shed.store(share.shed(), Relaxed);
        if sessions.is_empty() && !due {
            continue;
        }
        let batch = Arc::new(Batch {
            sessions,
            positions: due.then(|| positions.drain(..).map(|p| fix(&p, now, unix)).collect()),
        });
        if due {
            next_positions = now + POSITIONS_EVERY;
        }
        for s in &subscribers {
            if s.try_send(batch.clone()).is_err() {
                stats.feed_batches_dropped.fetch_add(1, Relaxed);
            }
        }
    }
    lock(&engine).record_sessions(None, Instant::now());
    Ok(())
}
