//! The HTTP-era server list beside the master (issue 19): the curated sources read at
//! start and on SIGHUP, the prober and the resolver as supervised tasks, and the
//! list's state kept in the master's state file. The decisions are the `serverlist`
//! crate's.

use anyhow::Result;
use lifecycle::{lock, Supervisor};
use serverlist::driver::{self, Options, Shared};
use std::sync::{Arc, Mutex};

/// The list shared by its tasks and its readers (HTTP).
pub type List = Arc<Shared>;

/// The list's options from the checked configuration.
pub fn options(o: &config::ServerListOptions) -> Options {
    let d = Options::default();
    Options {
        sources: o.sources.clone(),
        prober: serverlist::ProberConfig {
            interval: o.probe_interval,
            rate: o.probe_rate,
            ..d.prober
        },
        grace: o.grace.as_secs() as i64,
        prune_after: o.prune_after.as_secs() as i64,
        sample_every: o.sample_interval,
        registration: o.registration.then_some(serverlist::registration::Limits {
            allow_private: o.registration_private,
            ..Default::default()
        }),
        ..d
    }
}

/// Reads the sources (a directory that cannot be read is an error: the operator
/// named it), restores the saved state and registrations, and starts the prober, the
/// resolver and the registration checks under `sup` when there are sources or
/// registration is on.
pub fn start(
    sup: &Supervisor,
    opts: Options,
    engine: Arc<Mutex<master::Engine>>,
    saved: (Option<serde_json::Value>, Option<serde_json::Value>),
) -> Result<List> {
    let has_sources = opts.sources.is_some();
    let runs = has_sources || opts.registration.is_some();
    let list: List = Arc::new(Shared::new(opts));
    if has_sources {
        list.read_sources_logged()
            .map_err(|e| anyhow::anyhow!("server list: {e}"))?;
    }
    if let Some(v) = saved.0 {
        let n = serverlist::export::restore_state(&mut lock(&list.catalog), &v);
        tracing::info!(entries = n, "server list state restored");
    }
    if let Some(r) = saved.1.and_then(|v| serde_json::from_value(v).ok()) {
        *lock(&list.registrations) = r;
        let listed = lock(&list.registrations).listed();
        lock(&list.catalog).set_registered(&listed);
    }
    if runs {
        let (l, stop) = (list.clone(), sup.stop().clone());
        sup.spawn_task("master-list", async move {
            let hb = move || serverlist::beside_master::heard(&engine);
            driver::run(l, hb, async move { stop.stopped().await }).await?;
            Ok(())
        });
        let (l, stop) = (list.clone(), sup.stop().clone());
        sup.spawn_task("master-resolver", async move {
            driver::resolve_loop(l, async move { stop.stopped().await }).await;
            Ok(())
        });
        let (l, stop) = (list.clone(), sup.stop().clone());
        sup.spawn_task("master-registration", async move {
            driver::registration_loop(l, async move { stop.stopped().await }).await;
            Ok(())
        });
    }
    Ok(list)
}

/// The list's state for the state file.
pub fn state(list: &Shared) -> serde_json::Value {
    serverlist::export::state_json(&lock(&list.catalog))
}
