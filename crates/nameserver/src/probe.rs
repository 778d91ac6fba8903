//! The directory's health probes: an fgms PING to each relay (as FlightGear's own
//! client sends it), all at once every `probe_interval`, and the published zone
//! updated from the answers.

use super::zone::{zone_handler, ServedZone};
use anyhow::Result;
use directory::probe::Ping;
use directory::{Directory, ZoneUpdate};
use fgquery::ping::ping_relay;
use hickory_proto::rr::{Name, Record};
use lifecycle::Stop;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How the relays are probed.
pub(super) struct Prober {
    pub(super) ping: Arc<Ping>,
    pub(super) interval: Duration,
    pub(super) timeout: Duration,
}

/// Probes every relay at once; `(index, round trip)` for each whose probe ran: one
/// that failed here (no socket, no descriptor, no memory) says nothing of its relay
/// and is left out, logged at warn at most once a second.
pub(super) async fn probe_all(
    targets: Vec<(usize, Option<SocketAddr>)>,
    ping: &Arc<Ping>,
    timeout: Duration,
) -> Vec<(usize, Option<Duration>)> {
    // Concurrent in this one task (no task per probe): each waits on its own socket.
    let probes = targets.into_iter().map(|(i, addr)| async move {
        let Some(a) = addr else {
            return Some((i, None));
        };
        match ping_relay(ping, a, timeout).await {
            Ok(rtt) => {
                metrics::histogram!(directory::stats::families::PROBE_RTT.name).record(rtt.as_secs_f64());
                Some((i, Some(rtt)))
            }
            Err(e) if e.is_local() => {
                static GATE: telemetry::LogGate = telemetry::LogGate::new();
                if GATE.warn_at(udp::time::unix_secs() as u64) {
                    tracing::warn!(error = %e, "relay probe not run: a local error, not the relay's (at most one such line a second)");
                }
                None
            }
            Err(e) => {
                tracing::debug!(error = %e, "relay probe failed");
                Some((i, None))
            }
        }
    });
    futures_util::future::join_all(probes)
        .await
        .into_iter()
        .flatten()
        .collect()
}

/// Serves what a round of probes changed and hands the owned records to the pusher.
async fn publish(
    update: ZoneUpdate,
    origin: &Name,
    zone: &ServedZone,
    owned: &tokio::sync::watch::Sender<Vec<Record>>,
) {
    for t in &update.transitions {
        tracing::info!(relay = %t.host, up = t.up, "relay health changed");
    }
    let mut fresh = zone_handler(origin, update.records, update.serial);
    *zone.zone.records_mut().await = std::mem::take(fresh.records_get_mut());
    tracing::info!(serial = update.serial, "zone updated");
    // No receiver (no push configured) is fine.
    let _ = owned.send(update.owned);
}

/// Probes the relays every interval and publishes what changed, until the stop signal.
pub(super) async fn probe_loop(
    directory: Arc<Mutex<Directory>>,
    zone: ServedZone,
    owned: tokio::sync::watch::Sender<Vec<Record>>,
    prober: Prober,
    stop: Stop,
) -> Result<()> {
    let mut tick = tokio::time::interval(prober.interval);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    // The first tick is immediate, and start-up just probed.
    tick.tick().await;
    let mut round: u64 = 0;
    loop {
        tokio::select! {
            _ = tick.tick() => {}
            _ = stop.stopped() => return Ok(()),
        }
        lifecycle::injected_panic("dns-prober");
        round += 1;
        resolve_relays(&directory, round).await;
        let targets = lifecycle::lock(&directory).probe_targets();
        let outcomes = probe_all(targets, &prober.ping, prober.timeout).await;
        let (update, origin) = {
            let mut d = lifecycle::lock(&directory);
            (
                d.record_probes(outcomes, std::time::Instant::now()),
                d.origin().clone(),
            )
        };
        match update {
            Ok(Some(u)) => publish(u, &origin, &zone, &owned).await,
            Ok(None) => {}
            Err(e) => tracing::error!(error = %e, "cannot rebuild the zone"),
        }
    }
}

/// Probe rounds between re-resolutions of a relay host that did resolve.
const RERESOLVE_ROUNDS: u64 = 30;

/// Resolves the relay hosts that need it: unresolved ones every round (the probe
/// interval is the retry delay), resolved ones every [`RERESOLVE_ROUNDS`].
pub(super) async fn resolve_relays(directory: &Arc<Mutex<Directory>>, round: u64) {
    let todo = lifecycle::lock(directory).to_resolve();
    for (i, host, port, known) in todo {
        if known && !round.is_multiple_of(RERESOLVE_ROUNDS) {
            continue;
        }
        let text = host.to_string().trim_end_matches('.').to_string();
        let q = text.clone();
        let r = tokio::task::spawn_blocking(move || udp::addr::resolve(&q, port)).await;
        let addr = match r {
            Ok(Ok(a)) => Some(a),
            Ok(Err(e)) => {
                tracing::warn!(relay = %text, error = %e, "cannot resolve the relay's host to probe it; retrying next round");
                None
            }
            Err(e) => {
                tracing::error!(error = %e, "resolver task failed");
                None
            }
        };
        if lifecycle::lock(directory).resolved(i, addr) {
            tracing::info!(relay = %text, addr = ?addr, "relay host resolved");
        }
    }
}
