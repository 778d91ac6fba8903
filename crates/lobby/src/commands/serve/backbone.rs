//! The backbone: every part a serving command runs, started in order under one
//! supervisor, reconfigured on SIGHUP, stopped together.

use crate::http::server::HttpServer;
use crate::http::sources::Sources;
use crate::services::master::MasterServer;
use crate::services::relay::RelayServer;
use crate::services::sim::{Fleet, FleetSpec};
use crate::udp_worker::{Replies, Workers};
use anyhow::{Context, Result};
use lifecycle::Supervisor;
use nameserver::DnsServer;
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// Which parts a command runs (the flight log runs wherever `[history]` names a
/// database).
#[derive(Clone, Copy)]
pub(super) struct Parts {
    pub(super) relay: bool,
    pub(super) master: bool,
    pub(super) dns: bool,
    pub(super) http: bool,
    pub(super) sim: bool,
    pub(super) tracker: bool,
}

/// Every part running in this process, and the supervisor that runs them.
pub(super) struct Backbone {
    pub(super) sup: Supervisor,
    relay: Option<RelayServer>,
    master: Option<MasterServer>,
    dns: Option<DnsServer>,
    http: Option<HttpServer>,
    sim: Option<Fleet>,
    tracker: Option<crate::services::tracker::server::TrackerServer>,
    history: Option<crate::services::history::History>,
}

impl Backbone {
    /// Checks every section, then starts the chosen parts in dependency order (the
    /// directory publishes the relay; HTTP reads the master, relay and directory; the
    /// simulated servers register with the master).
    pub(super) async fn start(
        f: &config::File,
        parts: Parts,
        admin: &Arc<crate::http::admin_state::Admin>,
    ) -> Result<Backbone> {
        let relay_cfg = parts.relay.then(|| f.relay.engine_config()).transpose()?;
        let master_cfg = parts
            .master
            .then(|| f.master.engine_config(&|v| udp::addr::resolve(v, 0)))
            .transpose()?;
        let sup = Supervisor::new();
        let ready = lifecycle::Readiness::default();
        let http_addrs = f.http.listen_addrs()?;
        if parts.http && !http_addrs.is_empty() {
            // Before the parts start, so that their workers' histograms record.
            crate::recorder::install_with(f.http.limits()?.metrics_idle);
        }
        let history = match f.history.options()? {
            Some(o) => Some(crate::services::history::History::start(&sup, o).await?),
            None => None,
        };
        let relay = match relay_cfg {
            Some(cfg) => Some(start_relay(&sup, f, cfg, history.as_ref()).await?),
            None => None,
        };
        if let Some(r) = &relay {
            admin.attach_relay(r.control(), sup.tasks("admin"));
        }
        let master = match master_cfg {
            Some(cfg) => Some(start_master(&sup, f, cfg)?),
            None => None,
        };
        if let (Some(h), Some(m), Some(o)) = (&history, &master, f.history.options()?) {
            h.sample_servers(
                &sup,
                m.engine().clone(),
                m.names().cloned(),
                m.list().clone(),
                o.server_sample_interval,
            );
        }
        let tracker_listen = f.tracker.listen_addrs()?;
        let tracker = if parts.tracker && !tracker_listen.is_empty() {
            Some(crate::services::tracker::server::TrackerServer::start(
                &sup,
                &tracker_listen,
                f.tracker.server_options()?,
                history.clone(),
            )?)
        } else {
            None
        };
        let dns = match parts.dns {
            true => Some(
                DnsServer::start(
                    &sup,
                    &f.dns,
                    &f.directory,
                    published_relay(f, relay.as_ref()),
                )
                .await?,
            ),
            false => None,
        };
        for (part, on) in [
            ("relay", relay.is_some()),
            ("master", master.is_some()),
            ("dns", dns.is_some()),
            ("tracker", tracker.is_some()),
            ("history", history.is_some()),
        ] {
            if on {
                ready.set(part, Ok(())); // bound, and (dns) probed once
            }
        }
        let sim_wanted = master.is_some() && parts.sim && f.sim.count > 0;
        if sim_wanted {
            ready.set("sim", Err("starting".into()));
        }
        let http_limits = f.http.limits()?;
        let http = if parts.http && !http_addrs.is_empty() {
            let sources = Sources {
                master: master.as_ref().map(|m| m.engine().clone()),
                relay: relay.as_ref().map(|r| r.engine().clone()),
                directory: dns.as_ref().map(|d| d.directory.clone()),
                restarts: Some(sup.restart_counts()),
                peers: relay.as_ref().map(|r| r.peers().clone()),
                names: master.as_ref().and_then(|m| m.names().cloned()),
                list: master.as_ref().map(|m| m.list().clone()),
                history: history.clone(),
                tracker: tracker.as_ref().map(|t| t.stats.clone()),
                ready: ready.clone(),
            };
            let h = HttpServer::start(&sup, &http_addrs, http_limits, sources, Some(admin.clone()))
                .await?;
            ready.set("http", Ok(()));
            Some(h)
        } else {
            None
        };
        let sim = match (&master, sim_wanted) {
            (Some(m), true) => {
                let fleet = start_sim(&sup, f, m).await?;
                ready.set("sim", Ok(()));
                Some(fleet)
            }
            _ => None,
        };
        tracing::info!(
            relay_udp = ?relay.as_ref().map(|r| r.udp_addrs().to_vec()),
            relay_telnet = ?relay.as_ref().map(|r| r.telnet.clone()),
            master_udp = ?master.as_ref().map(|m| m.udp_addrs().to_vec()),
            http = ?http.as_ref().map(|h| h.addrs.clone()),
            "parts started"
        );
        Ok(Backbone {
            sup,
            relay,
            master,
            dns,
            http,
            sim,
            tracker,
            history,
        })
    }

    pub(super) fn reload(&self, f: &config::File) -> Result<()> {
        let relay_cfg = self
            .relay
            .as_ref()
            .map(|_| f.relay.engine_config())
            .transpose()?;
        let list_opts = self
            .master
            .as_ref()
            .map(|_| f.master.server_list())
            .transpose()?;
        let master_cfg = self
            .master
            .as_ref()
            .map(|_| f.master.engine_config(&|v| udp::addr::resolve(v, 0)))
            .transpose()?;
        if let (Some(r), Some(c)) = (&self.relay, relay_cfg) {
            r.control().reconfigure(c, peer_options(f)?);
        }
        if let (Some(m), Some(c), Some(l)) = (&self.master, master_cfg, list_opts) {
            m.reconfigure(c, crate::services::master::list::options(&l));
        }
        Ok(())
    }

    /// Stops every part (the simulated servers say goodbye to the master first, while
    /// it still listens), then saves the master's state once.
    pub(super) async fn shutdown(self) -> Result<()> {
        self.sup.shutdown().await;
        drop((
            self.sim,
            self.http,
            self.relay,
            self.dns,
            self.tracker,
            self.history,
        ));
        if let Some(m) = self.master {
            tokio::task::spawn_blocking(move || m.final_save()).await??;
        }
        Ok(())
    }
}

fn peer_options(f: &config::File) -> Result<config::PeerOptions> {
    Ok(config::PeerOptions {
        names: f.relay.peer_names()?,
        refresh: f.relay.peer_refresh()?,
    })
}

async fn start_relay(
    sup: &Supervisor,
    f: &config::File,
    cfg: relay::Config,
    history: Option<&crate::services::history::History>,
) -> Result<RelayServer> {
    let workers = Workers {
        per_addr: f.relay.workers(),
        realtime_priority: f.relay.realtime_priority,
        // Every datagram: the copies sent for it.
        replies: Replies::new(crate::recorder::RELAY_FANOUT, |_| true),
    };
    RelayServer::start(
        sup,
        cfg,
        peer_options(f)?,
        &f.relay.listen_addrs()?,
        f.relay.telnet_options()?,
        workers,
        crate::services::relay::Recorders {
            tracker: f.relay.tracker_options()?,
            feeds: history
                .map(|h| vec![h.feed(sup, f.relay.name.clone())])
                .unwrap_or_default(),
        },
    )
    .await
}

fn start_master(sup: &Supervisor, f: &config::File, cfg: master::Config) -> Result<MasterServer> {
    let state = (!f.master.state_file.is_empty()).then(|| PathBuf::from(&f.master.state_file));
    MasterServer::start(
        sup,
        cfg,
        &f.master.listen_addrs()?,
        f.master.workers(),
        state,
        Duration::from_secs_f64(f.master.save_interval),
        f.master.name_refresh()?,
        crate::services::master::list::options(&f.master.server_list()?),
    )
}

/// The local relay the directory publishes (`lobby up`): its first IPv4 address, a
/// wildcard bind shown as loopback.
fn published_relay(f: &config::File, relay: Option<&RelayServer>) -> Option<(SocketAddr, String)> {
    let r = relay?;
    let a = r
        .udp_addrs()
        .iter()
        .find(|a| a.is_ipv4())
        .or(r.udp_addrs().first())?;
    let ip = if a.ip().is_unspecified() {
        IpAddr::from([127, 0, 0, 1])
    } else {
        a.ip()
    };
    Some((SocketAddr::new(ip, a.port()), f.relay.name.clone()))
}

async fn start_sim(sup: &Supervisor, f: &config::File, master: &MasterServer) -> Result<Fleet> {
    let masters: Vec<SocketAddr> = master
        .udp_addrs()
        .iter()
        .filter(|a| a.is_ipv4())
        .copied()
        .collect();
    let spec = FleetSpec {
        count: f.sim.count,
        seed: f.sim.seed,
        masters,
        listen_ip: f
            .sim
            .listen_ip
            .parse()
            .with_context(|| format!("sim.listen_ip {:?} is not an IP", f.sim.listen_ip))?,
        gamedir: f.sim.gamedir.clone(),
        nat_allow_private: true,
        ..FleetSpec::default()
    };
    Fleet::start(sup, spec).await
}
