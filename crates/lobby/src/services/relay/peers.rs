//! The resolver task of the relay's peers and crossfeed targets: it runs
//! [`relay::peers::Peers`]' schedule (names resolved off the engine, with backoff,
//! and again periodically) and applies every change of address to the engine.

use anyhow::Result;
use lifecycle::{lock, Stop};
use relay::peers::{Outcome, Peers};
use relay::stats::add;
use relay::Engine;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Longest a resolution may take before it counts as failed.
const RESOLVE_TIMEOUT: Duration = Duration::from_secs(10);

/// The peers of a running relay and the configuration they complete.
pub struct PeerState {
    /// The engine configuration without the peers.
    pub base: relay::Config,
    /// The peers.
    pub peers: Peers,
}

/// Resolves due names until `stop`, applying every change to `engine`. `wake` is
/// notified when a reload replaced the peers.
pub async fn resolve_loop(
    state: Arc<Mutex<PeerState>>,
    engine: Arc<Mutex<Engine>>,
    wake: Arc<tokio::sync::Notify>,
    stop: Stop,
) -> Result<()> {
    let stats = lock(&engine).stats().clone();
    loop {
        let now = Instant::now();
        let due = lock(&state).peers.due(now);
        let mut changed = false;
        for name in due {
            let (host, port) = (name.host.clone(), name.port);
            let lookup = tokio::task::spawn_blocking(move || {
                udp::addr::resolve(&format!("{host}:{port}"), port)
            });
            let got = match tokio::time::timeout(RESOLVE_TIMEOUT, lookup).await {
                Ok(Ok(Ok(a))) => Ok(a),
                Ok(Ok(Err(e))) => Err(e.to_string()),
                Ok(Err(e)) => Err(e.to_string()),
                Err(_) => Err(format!("no answer within {} s", RESOLVE_TIMEOUT.as_secs())),
            };
            let mut st = lock(&state);
            let before = st.peers.address(&name);
            match st
                .peers
                .record(&name, Instant::now(), got.as_ref().ok().copied())
            {
                Outcome::Changed => {
                    add(&stats.peer_address_changes, 1);
                    let addr = got.as_ref().ok();
                    match before {
                        None => {
                            tracing::info!(peer = %name.text, addr = ?addr, kind = name.kind.name(), "resolved")
                        }
                        Some(old) => {
                            tracing::info!(peer = %name.text, %old, new = ?addr, kind = name.kind.name(), "address changed")
                        }
                    }
                    changed = true;
                }
                Outcome::Same => {}
                Outcome::Failed => {
                    add(&stats.peer_resolve_failures, 1);
                    let error = got.err().unwrap_or_default();
                    let retry = st.peers.retry_at(&name);
                    let in_s =
                        retry.map_or(0, |t| t.saturating_duration_since(Instant::now()).as_secs());
                    let kept = before
                        .map(|a| a.to_string())
                        .unwrap_or_else(|| "none".into());
                    tracing::warn!(peer = %name.text, kind = name.kind.name(), %error, retry_in_s = in_s, last_address = %kept, "could not resolve");
                }
            }
        }
        if changed {
            let st = lock(&state);
            let config = st.peers.apply(&st.base);
            drop(st);
            lock(&engine).reconfigure(config);
        }
        let next = lock(&state).peers.next_due();
        let sleep = next.map_or(Duration::from_secs(3600), |t| {
            t.saturating_duration_since(Instant::now())
        });
        tokio::select! {
            _ = tokio::time::sleep(sleep) => {}
            _ = wake.notified() => {}
            _ = stop.stopped() => return Ok(()),
        }
    }
}
