//! The flight log part: one writer task owning the open flights
//! (`flightlog::Flights`) and writing batches to the store (`flightlog::Store`:
//! SQLite or PostgreSQL) once a second, in one transaction each. Inputs come
//! through one bounded channel: the local relay's pilot feed, the tracker server's
//! reports, and samples of the master's servers. A full channel drops reports
//! (counted), so neither the relay nor the tracker connections ever wait for the
//! database. Retention deletes what ended before `retention_days`.
//! The channel holds `queue` inputs and `queue_reports` reports, a quarter of them
//! at most one relay's (issue 20, item 1); past [`MAX_OPS`] operations are written
//! at once; which sessions become flights is `flightlog::flights`'s rule.

use crate::services::feed::Batch;
use anyhow::Result;
use config::HistoryOptions;
use flightlog::flights::{Fix, Flights, Op, Report};
use flightlog::share::QueueShare;
use flightlog::store::{ServerSample, Store};
use lifecycle::{lock, Stop, Supervisor};
use std::sync::atomic::Ordering::Relaxed;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::mpsc;

/// Open flights and held sessions at most (more are not recorded, counted).
const MAX_OPEN: usize = 200_000;
/// Operations gathered between two writes, at most: past it they are written at once.
pub const MAX_OPS: usize = 100_000;
/// How often the database's size is read.
const SIZE_EVERY: Duration = Duration::from_secs(60);
/// A flight with no report for this long is closed at its last position (a relay
/// that stopped reporting without saying so).
const SILENCE_SECS: i64 = 600;
/// How often the writer commits what it has.
const FLUSH_EVERY: Duration = Duration::from_secs(1);
/// Flight ids reserved from the store at a time.
const ID_BLOCK: i64 = 1000;
/// How often retention runs.
const PRUNE_EVERY: Duration = Duration::from_secs(3600);

/// One input of the writer.
#[derive(Debug)]
pub enum Input {
    /// Reports of one relay.
    Reports(Vec<Report>),
    /// A relay's reports ended (its tracker connection closed): its flights end.
    RelayGone(String),
    /// Servers' states.
    Servers(Vec<ServerSample>),
}

/// The flight log's Prometheus families, in `/metrics` and docs order.
pub mod families {
    use telemetry::Family;

    telemetry::families! {
        /// Every family of the flight log.
        pub const FAMILIES;
        DROPPED = Family::counter(
            "lobby_history_dropped_total",
            "Flight log inputs dropped because the writer's queue, or the relay's share of it, was full, by what (report, server_sample).",
        )
        .label("what");
        ROWS_WRITTEN = Family::counter(
            "lobby_history_rows_written_total",
            "Flight log database operations written.",
        );
        WRITE_ERRORS = Family::counter(
            "lobby_history_write_errors_total",
            "Flight log batches the database refused (their operations lost).",
        );
        FLIGHTS_OPEN = Family::gauge(
            "lobby_history_flights_open",
            "Flights open in the flight log now.",
        );
        FLIGHTS_OVER_CAP = Family::counter(
            "lobby_history_flights_over_cap_total",
            "Flights not recorded: too many open at once.",
        );
        FLIGHTS_PRUNED = Family::counter(
            "lobby_history_flights_pruned_total",
            "Flights deleted by retention.",
        );
        SESSIONS_HELD = Family::gauge(
            "lobby_history_sessions_held",
            "Pilot sessions held that are no flight yet: shorter than min_flight_secs so far, or waiting for room.",
        );
        NOT_RECORDED = Family::counter(
            "lobby_history_sessions_not_recorded_total",
            "Pilot sessions that never became flights, by reason (too_short: ended before min_flight_secs; over_rate: their pilot slot or source had no room before they ended).",
        )
        .label("reason");
        POSITIONS_UNPLACED = Family::counter(
            "lobby_history_positions_unplaced_total",
            "Pilot positions left out of flights as not placed yet (FlightGear's -9999 ft before its scenery loads).",
        );
        TRACKS_RESTARTED = Family::counter(
            "lobby_history_tracks_restarted_total",
            "Held sessions whose track began again at a jump faster than any aircraft (a client still placing itself).",
        );
        FLIGHTS_SPLIT = Family::counter(
            "lobby_history_flights_split_total",
            "Flights ended at max_flight_hours, the pilot's next position beginning another.",
        );
        DATABASE_BYTES = Family::gauge(
            "lobby_history_database_bytes",
            "The flight log database's size, bytes, read every minute (SQLite: its pages; PostgreSQL: pg_database_size).",
        );
    }
}

telemetry::fields! {
    /// The flight log's counters (`/stats` → `history`).
    pub struct HistoryStats in families::FAMILIES {
        /// Reports dropped because the queue was full.
        pub reports_dropped => families::DROPPED["report"];
        /// Server samples dropped because the queue was full.
        pub server_samples_dropped => families::DROPPED["server_sample"];
        /// Database operations written.
        pub rows_written => families::ROWS_WRITTEN;
        /// Batches the database refused (their operations are lost; logged).
        pub write_errors => families::WRITE_ERRORS;
        /// Flights open now.
        pub flights_open => families::FLIGHTS_OPEN;
        /// Flights not recorded: too many open.
        pub flights_over_cap => families::FLIGHTS_OVER_CAP;
        /// Flights and server samples deleted by retention.
        pub pruned => families::FLIGHTS_PRUNED;
        /// Sessions held that are no flight yet.
        pub sessions_held => families::SESSIONS_HELD;
        /// Sessions that ended before `min_flight_secs`: no flight.
        pub too_short => families::NOT_RECORDED["too_short"];
        /// Sessions whose slot or source had no room before they ended: no flight.
        pub over_rate => families::NOT_RECORDED["over_rate"];
        /// Flights ended at `max_flight_hours`.
        pub flights_split => families::FLIGHTS_SPLIT;
        /// Positions left out as not placed yet (-9,999 ft).
        pub positions_unplaced => families::POSITIONS_UNPLACED;
        /// Held tracks begun again at a jump.
        pub tracks_restarted => families::TRACKS_RESTARTED;
        /// The database's size, bytes (every minute).
        pub database_bytes => families::DATABASE_BYTES;
    }
}

/// The running flight log.
#[derive(Clone)]
pub struct History {
    /// The database, for the API's reads.
    pub store: Store,
    tx: mpsc::Sender<Input>,
    /// What each relay's reports hold of the queue.
    share: Arc<Mutex<QueueShare>>,
    /// Counters.
    pub stats: Arc<HistoryStats>,
}

impl History {
    /// Opens and migrates the database, ends flights a previous run left open, and
    /// starts the writer under `sup`.
    pub async fn start(sup: &Supervisor, opts: HistoryOptions) -> Result<History> {
        let store = Store::open(&opts.database_url).await?;
        let orphans = store.close_orphans().await?;
        tracing::info!(
            database = %flightlog::store::redact(&opts.database_url),
            orphans,
            "flight log open"
        );
        let (tx, rx) = mpsc::channel(opts.queue);
        let stats = Arc::new(HistoryStats::default());
        let n = opts.queue_reports;
        let share = Arc::new(Mutex::new(QueueShare::new(n, (n / 4).max(1))));
        let writer = Writer {
            store: store.clone(),
            flights: Flights::with_id_blocks(MAX_OPEN).with_limits(opts.limits),
            ops: Vec::new(),
            servers: Vec::new(),
            stats: stats.clone(),
            retention: opts.retention,
            share: share.clone(),
        };
        sup.spawn_task("history", writer.run(rx, sup.stop().clone()));
        Ok(History {
            store,
            tx,
            share,
            stats,
        })
    }

    /// Queues `input` unless the queue, or its relay's share of it, is full (then it
    /// is dropped and counted).
    pub fn send(&self, input: Input) {
        let (lost, relay) = match &input {
            Input::Reports(r) => (
                Some((&self.stats.reports_dropped, r.len())),
                r.first().map(|r| r.relay().to_string()),
            ),
            Input::Servers(s) => (Some((&self.stats.server_samples_dropped, s.len())), None),
            Input::RelayGone(_) => (None, None),
        };
        let n = lost.map_or(0, |l| l.1);
        let held = relay.as_ref().is_none_or(|r| lock(&self.share).admit(r, n));
        if !held || self.tx.try_send(input).is_err() {
            if let (true, Some(r)) = (held, &relay) {
                lock(&self.share).release(r, n);
            }
            if let Some((c, n)) = lost {
                c.fetch_add(n as u64, Relaxed);
            }
        }
    }

    /// A pilot feed subscriber recording the local relay's pilots under `relay`.
    pub fn feed(&self, sup: &Supervisor, relay: String) -> mpsc::Sender<Arc<Batch>> {
        let (tx, mut rx) = mpsc::channel::<Arc<Batch>>(crate::services::feed::SUBSCRIBER_BACKLOG);
        let me = self.clone();
        let stop = sup.stop().clone();
        sup.spawn_task("history", async move {
            loop {
                let b = tokio::select! {
                    b = rx.recv() => match b { Some(b) => b, None => return Ok(()) },
                    _ = stop.stopped() => return Ok(()),
                };
                me.send(Input::Reports(reports(&b, &relay)));
            }
        });
        tx
    }

    /// Samples the master's listed servers every `every` (players, map, name), and
    /// the curated list's servers that answered a probe within that time.
    pub fn sample_servers(
        &self,
        sup: &Supervisor,
        master: Arc<Mutex<master::Engine>>,
        names: Option<serverlist::names::Names>,
        list: crate::services::master::list::List,
        every: Duration,
    ) {
        let me = self.clone();
        let stop = sup.stop().clone();
        sup.spawn_task("history", async move {
            let mut tick = tokio::time::interval(every);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tokio::select! {
                    _ = tick.tick() => {}
                    _ = stop.stopped() => return Ok(()),
                }
                let at = udp::time::unix_secs();
                let mut samples: Vec<(std::net::SocketAddr, ServerSample)> = {
                    let e = lock(&master);
                    e.table()
                        .listed()
                        .map(|l| {
                            let s = ServerSample {
                                address: l.addr.to_string(),
                                gamedir: String::from_utf8_lossy(&l.server.gamedir).into_owned(),
                                name: None,
                                at,
                                players: i64::from(l.server.players),
                                max: i64::from(l.server.max),
                                map: String::from_utf8_lossy(&l.server.map).into_owned(),
                            };
                            (l.addr, s)
                        })
                        .collect()
                };
                if let Some(n) = &names {
                    let book = lock(n);
                    for (a, s) in &mut samples {
                        s.name = book.name(a).map(str::to_string);
                    }
                }
                let fresh = at - every.as_secs() as i64;
                let grace = lock(&list.options).grace;
                let published = lock(&list.catalog).published(at, grace);
                serverlist::merged::merge(
                    &mut samples,
                    published,
                    |a| a.at >= fresh,
                    |_, _| {},
                    |p, a, _| ServerSample {
                        address: p.addr.to_string(),
                        gamedir: p.gamedir.clone(),
                        name: Some(query::strip_colors(&a.info.name)),
                        at,
                        players: i64::from(a.info.players),
                        max: i64::from(a.info.max),
                        map: a.info.map.clone(),
                    },
                );
                let samples: Vec<ServerSample> = samples.into_iter().map(|(_, s)| s).collect();
                if !samples.is_empty() {
                    me.send(Input::Servers(samples));
                }
            }
        });
    }
}

/// The reports of one pilot feed batch.
pub fn reports(b: &Batch, relay: &str) -> Vec<Report> {
    let mut v: Vec<Report> = b
        .sessions
        .iter()
        .map(|s| {
            if s.began {
                Report::Began {
                    callsign: s.callsign.clone(),
                    model: s.model.clone(),
                    relay: relay.to_string(),
                    at: s.at,
                    source: s.source.clone(),
                }
            } else {
                Report::Ended {
                    callsign: s.callsign.clone(),
                    relay: relay.to_string(),
                    at: s.at,
                }
            }
        })
        .collect();
    if let Some(p) = &b.positions {
        v.extend(p.iter().map(|p| Report::Position {
            callsign: p.callsign.clone(),
            relay: relay.to_string(),
            at: p.at,
            fix: Fix {
                lat: p.lat,
                lon: p.lon,
                alt_ft: p.alt_ft,
                heading: p.heading,
            },
        }));
    }
    v
}

/// The writer task's state.
struct Writer {
    store: Store,
    flights: Flights,
    ops: Vec<Op>,
    servers: Vec<ServerSample>,
    stats: Arc<HistoryStats>,
    retention: Duration,
    share: Arc<Mutex<QueueShare>>,
}

impl Writer {
    /// Makes sure at least `n` flight ids are at hand (a block from the store, so
    /// other lobby processes writing the same database never take the same ids).
    async fn ids_for(&mut self, n: usize) {
        let n = n as i64;
        if self.flights.ids_left() >= n {
            return;
        }
        let want = n.max(ID_BLOCK);
        match self.store.reserve_flight_ids(want).await {
            Ok(start) => self.flights.add_ids(start, want),
            Err(e) => {
                self.stats.write_errors.fetch_add(1, Relaxed);
                tracing::error!("{e:#}");
            }
        }
    }

    async fn take(&mut self, input: Input) {
        match input {
            Input::Reports(rs) => {
                if let Some(r) = rs.first() {
                    lock(&self.share).release(r.relay(), rs.len());
                }
                // Each report opens at most two flights (a held one and its next).
                self.ids_for(2 * rs.len()).await;
                for r in rs {
                    self.flights.apply(r, &mut self.ops);
                }
            }
            Input::RelayGone(relay) => {
                self.ids_for(self.flights.tracked()).await;
                self.flights
                    .close_relay(Some(&relay), udp::time::unix_secs(), &mut self.ops)
            }
            Input::Servers(s) => self.servers.extend(s),
        }
        if self.ops.len() >= MAX_OPS || self.servers.len() >= MAX_OPS {
            self.flush().await;
        }
    }

    async fn flush(&mut self) {
        let held = self.flights.held();
        self.ids_for(held.held).await;
        self.flights
            .close_silent(udp::time::unix_secs(), SILENCE_SECS, &mut self.ops);
        let st = self.flights.stats();
        for (c, v) in [
            (&self.stats.flights_open, held.open as u64),
            (&self.stats.sessions_held, held.held as u64),
            (&self.stats.flights_over_cap, st.dropped_open_cap),
            (&self.stats.too_short, st.too_short),
            (&self.stats.over_rate, st.over_rate),
            (&self.stats.flights_split, st.split),
            (&self.stats.positions_unplaced, st.unplaced),
            (&self.stats.tracks_restarted, st.restarted),
        ] {
            c.store(v, Relaxed);
        }
        if !self.ops.is_empty() {
            let n = self.ops.len() as u64;
            match self.store.apply(&self.ops).await {
                Ok(()) => {
                    self.stats.rows_written.fetch_add(n, Relaxed);
                }
                Err(e) => {
                    self.stats.write_errors.fetch_add(1, Relaxed);
                    tracing::error!("flight log write failed, {n} operations lost: {e:#}");
                }
            }
            self.ops.clear();
        }
        if !self.servers.is_empty() {
            let n = self.servers.len() as u64;
            match self.store.record_servers(&self.servers).await {
                Ok(()) => {
                    self.stats.rows_written.fetch_add(n, Relaxed);
                }
                Err(e) => {
                    self.stats.write_errors.fetch_add(1, Relaxed);
                    tracing::error!("server history write failed, {n} samples lost: {e:#}");
                }
            }
            self.servers.clear();
        }
    }

    async fn run(mut self, mut rx: mpsc::Receiver<Input>, stop: Stop) -> Result<()> {
        let mut flush = tokio::time::interval(FLUSH_EVERY);
        flush.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut prune = tokio::time::interval(PRUNE_EVERY);
        prune.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut size = tokio::time::interval(SIZE_EVERY);
        size.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                Some(input) = rx.recv() => self.take(input).await,
                _ = flush.tick() => self.flush().await,
                _ = size.tick() => match self.store.size_bytes().await {
                    Ok(n) => self.stats.database_bytes.store(n.max(0) as u64, Relaxed),
                    Err(e) => tracing::warn!("cannot read the flight log's size: {e:#}"),
                },
                _ = prune.tick() => {
                    let before = udp::time::unix_secs() - self.retention.as_secs() as i64;
                    match self.store.prune(before).await {
                        Ok(n) => {
                            self.stats.pruned.fetch_add(n, Relaxed);
                            if n > 0 {
                                tracing::info!(flights = n, "flight log retention");
                            }
                        }
                        Err(e) => tracing::error!("flight log retention failed: {e:#}"),
                    }
                }
                _ = stop.stopped() => break,
            }
        }
        // What is queued still goes in; the open flights end now.
        while let Ok(input) = rx.try_recv() {
            self.take(input).await;
        }
        self.ids_for(self.flights.tracked()).await;
        self.flights
            .close_relay(None, udp::time::unix_secs(), &mut self.ops);
        self.flush().await;
        self.store.close().await;
        Ok(())
    }
}
