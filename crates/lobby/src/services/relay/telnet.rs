//! The relay's telnet pilot list (fgms's port 5001): one rendering shared by every
//! connection for up to a second, within per-source and total connection caps.

use anyhow::Result;
use config::TelnetOptions;
use lifecycle::{accept, lock, Stop, Tasks};
use relay::stats::add;
use relay::{Engine, Stats};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpListener;
use udp::{ConnLimiter, Refusal};

/// How long one rendered telnet list is served before it is rendered again.
const TELNET_SNAPSHOT_AGE: Duration = Duration::from_secs(1);

/// The telnet pilot list: one rendering shared by every connection for up to
/// [`TELNET_SNAPSHOT_AGE`], and the connection limits.
pub(super) struct TelnetList {
    engine: Arc<Mutex<Engine>>,
    stats: Arc<Stats>,
    /// The last rendering and when its snapshot was taken. A tokio mutex: one
    /// connection renders while the others wait for its result.
    cached: tokio::sync::Mutex<Option<(Instant, Arc<str>)>>,
    /// Open connections, in total and per source.
    open: ConnLimiter,
    /// A client has this long to take the whole list (`[relay] telnet_write_timeout`).
    write_timeout: Duration,
}

impl TelnetList {
    pub(super) fn new(engine: Arc<Mutex<Engine>>, options: &TelnetOptions) -> TelnetList {
        let stats = lock(&engine).stats().clone();
        TelnetList {
            engine,
            stats,
            cached: tokio::sync::Mutex::new(None),
            open: ConnLimiter::new(options.max_connections, options.max_per_ip),
            write_timeout: options.write_timeout,
        }
    }

    /// The list as it is now, rendered at most once per [`TELNET_SNAPSHOT_AGE`].
    /// The engine lock is held only to copy the pilots; rendering happens outside it.
    async fn text(&self) -> Arc<str> {
        let mut cached = self.cached.lock().await;
        if let Some((at, text)) = cached.as_ref() {
            if at.elapsed() < TELNET_SNAPSHOT_AGE {
                return text.clone();
            }
        }
        let taken = Instant::now();
        let (name, pilots, counters) = {
            let e = lock(&self.engine);
            (
                e.config().name.clone(),
                e.pilots(taken),
                e.stats().snapshot(),
            )
        };
        let render = move || Arc::<str>::from(relay::telnet::render(&name, &pilots, &counters));
        let text = match tokio::task::spawn_blocking(render).await {
            Ok(t) => t,
            Err(e) => std::panic::resume_unwind(e.into_panic()),
        };
        *cached = Some((taken, text.clone()));
        text
    }
}

/// Accepts telnet connections until the stop signal; each gets the pilot list,
/// within the connection limits.
pub(super) async fn serve(
    listener: TcpListener,
    list: Arc<TelnetList>,
    tasks: Tasks,
    stop: Stop,
) -> Result<()> {
    loop {
        let (mut conn, peer) = tokio::select! {
            c = accept(&listener, "telnet", || {}) => c,
            _ = stop.stopped() => return Ok(()),
        };
        lifecycle::injected_panic("relay-telnet");
        let admitted = match list.open.acquire(peer.ip()) {
            Ok(a) => a,
            Err(why) => {
                let (counter, reason) = match why {
                    Refusal::PerSource => (
                        &list.stats.telnet_refused_per_ip,
                        "too many from this source",
                    ),
                    Refusal::Total => (&list.stats.telnet_refused_total, "too many in total"),
                };
                add(counter, 1);
                tracing::debug!(%peer, reason, "telnet connection refused");
                drop(conn); // closed at once, nothing sent.
                continue;
            }
        };
        let list = list.clone();
        tasks.spawn(async move {
            let _admitted = admitted;
            let write = async {
                let text = list.text().await;
                conn.write_all(text.as_bytes()).await?;
                conn.shutdown().await
            };
            match tokio::time::timeout(list.write_timeout, write).await {
                Ok(Ok(())) => {
                    add(&list.stats.telnet_served, 1);
                    tracing::debug!(%peer, "telnet pilot list sent");
                }
                Ok(Err(e)) => tracing::debug!(%peer, error = %e, "telnet client went away"),
                Err(_) => tracing::debug!(%peer, "telnet client too slow: closed"),
            }
        });
    }
}
