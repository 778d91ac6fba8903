//! What the JSON API answers from: a [`Publisher`] that copies what the engines hold
//! into a [`Snapshot`] at most once a second (only while someone reads: a request
//! finding the last snapshot older than a second, or a live stream), and the pilot
//! stream's updates (one diff per snapshot, serialised once for every client).

use crate::http::sources::Sources;
use api::dns::DnsBody;
use api::pilots::{Pilot, PilotsBody};
use api::relays::{Link, RelayInfo, RelaysBody};
use api::servers::ServerEntry;
use api::stream::Sent;
use api::Clock;
use lifecycle::lock;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};
use tokio::sync::broadcast;

/// Snapshots are taken at most this often.
pub const SNAPSHOT_INTERVAL: Duration = Duration::from_secs(1);

/// While a relay runs and no stream is open, a snapshot at least this often, so that
/// every chat line (carried about 10 s) is seen.
const CHAT_SAMPLE: Duration = Duration::from_secs(2);

/// How long a stream request at a cap waits for a place before its 503 (the
/// connection loop frees a closed stream's place within milliseconds).
pub const STREAM_GRACE: Duration = Duration::from_millis(500);

/// Stream updates a slow client may fall behind before it is disconnected.
const STREAM_BACKLOG: usize = 8;

/// What the engines held at one moment, in API form.
pub struct Snapshot {
    /// Counts up by one per snapshot (the stream's event id).
    pub seq: u64,
    taken: Option<Instant>,
    /// When it was taken.
    pub clock: Clock,
    /// The relay's pilots, if a relay runs here.
    pub pilots: Option<Vec<Pilot>>,
    pilots_json: OnceLock<String>,
    servers: Option<Vec<ServerEntry>>,
    /// Relay links and the directory's published relays.
    pub relays: RelaysBody,
    /// The directory's records, if a directory runs here.
    pub dns: Option<DnsBody>,
}

impl Snapshot {
    fn empty() -> Snapshot {
        Snapshot {
            seq: 0,
            taken: None,
            clock: wall_clock(),
            pilots: None,
            pilots_json: OnceLock::new(),
            servers: None,
            relays: RelaysBody {
                generated_at: 0,
                relay: None,
                published: Vec::new(),
            },
            dns: None,
        }
    }

    fn fresh(&self, now: Instant) -> bool {
        self.taken
            .is_some_and(|t| now.saturating_duration_since(t) < SNAPSHOT_INTERVAL)
    }

    /// The master's listed servers, if a master runs here.
    pub fn servers(&self) -> Option<&[ServerEntry]> {
        self.servers.as_deref()
    }

    /// The directory's published relays and their health.
    pub fn published(&self) -> &[api::relays::Published] {
        &self.relays.published
    }

    /// The body of an unfiltered `GET /api/pilots`, serialised once per snapshot.
    pub fn pilots_json(&self) -> &str {
        self.pilots_json.get_or_init(|| {
            let body = PilotsBody {
                generated_at: self.clock.now_secs(),
                online: self.pilots.as_ref().map_or(0, Vec::len),
                pilots: self.pilots.clone().unwrap_or_default(),
            };
            serde_json::to_string(&body).unwrap_or_default()
        })
    }
}

/// One stream update, serialised once for every client.
pub struct StreamUpdate {
    /// The snapshot it leads to.
    pub seq: u64,
    /// The `update` event's data, if pilots changed.
    pub data: Option<String>,
    /// The `chat` event's data (the new lines), if any.
    pub chat: Option<String>,
}

/// Takes snapshots and hands them and the stream's updates out.
pub struct Publisher {
    sources: Sources,
    latest: Mutex<Arc<Snapshot>>,
    /// Held while a snapshot is built: concurrent readers wait for it instead of
    /// building their own; holds what the stream last sent.
    building: tokio::sync::Mutex<Sent>,
    updates: broadcast::Sender<Arc<StreamUpdate>>,
    streams: udp::ConnLimiter,
    /// The relay's recent chat, fed by each snapshot.
    pub chat: Mutex<api::chat::ChatLog>,
    rates: Mutex<api::pilots::Rates>,
    /// How long one stream lasts.
    pub stream_lifetime: std::time::Duration,
}

/// The clock the API's times are read from: now, on both clocks.
pub fn wall_clock() -> Clock {
    Clock {
        mono: Instant::now(),
        unix: udp::time::since_epoch(),
    }
}

impl Publisher {
    /// A publisher over `sources`, allowing `max_streams` pilot streams at once,
    /// `per_ip` from one source, each lasting `lifetime`.
    pub fn new(
        sources: Sources,
        max_streams: usize,
        per_ip: usize,
        lifetime: std::time::Duration,
    ) -> Arc<Publisher> {
        Arc::new(Publisher {
            sources,
            latest: Mutex::new(Arc::new(Snapshot::empty())),
            building: tokio::sync::Mutex::new(Sent::default()),
            updates: broadcast::channel(STREAM_BACKLOG).0,
            streams: udp::ConnLimiter::new(max_streams, per_ip),
            chat: Mutex::new(api::chat::ChatLog::new(Default::default())),
            rates: Mutex::new(Default::default()),
            stream_lifetime: lifetime,
        })
    }

    /// Whether a relay runs here (the pilot stream has something to say).
    pub fn has_relay(&self) -> bool {
        self.sources.relay.is_some()
    }

    /// A place for one more pilot stream from `ip`, with its subscription to the
    /// updates (taken before the first snapshot is read, so no update between is
    /// missed); the cap reached otherwise. At a cap it waits up to
    /// [`STREAM_GRACE`] for a place: a client that closes a stream and reconnects at
    /// once (the page after a network blip) may be seen before its close is.
    pub async fn open_stream(
        &self,
        ip: std::net::IpAddr,
    ) -> Result<(udp::Slot, broadcast::Receiver<Arc<StreamUpdate>>), udp::Refusal> {
        let until = tokio::time::Instant::now() + STREAM_GRACE;
        let slot = loop {
            match self.streams.acquire(ip) {
                Ok(slot) => break slot,
                Err(why) if tokio::time::Instant::now() >= until => return Err(why),
                Err(_) => tokio::time::sleep(STREAM_GRACE / 10).await,
            }
        };
        Ok((slot, self.updates.subscribe()))
    }

    /// Pilot streams open now.
    pub fn open_streams(&self) -> usize {
        self.streams.open()
    }

    /// The latest snapshot, taken now if the last one is a second old or more.
    pub async fn current(self: &Arc<Self>) -> Arc<Snapshot> {
        let now = Instant::now();
        let have = lock(&self.latest).clone();
        if have.fresh(now) {
            return have;
        }
        let mut sent = self.building.lock().await;
        let have = lock(&self.latest).clone();
        if have.fresh(Instant::now()) {
            return have; // another request built it while this one waited
        }
        let me = self.clone();
        let before = std::mem::take(&mut *sent);
        let seq = have.seq + 1;
        let built = tokio::task::spawn_blocking(move || me.build(seq, before)).await;
        let (snap, (update, chat), after) = match built {
            Ok(x) => x,
            Err(e) => {
                tracing::error!(error = %e, "API snapshot failed");
                return have;
            }
        };
        *sent = after;
        let snap = Arc::new(snap);
        // Store first, then announce: a stream that subscribed and then read an
        // older snapshot still receives this update.
        *lock(&self.latest) = snap.clone();
        if update.is_some() || chat.is_some() {
            let _ = self.updates.send(Arc::new(StreamUpdate {
                seq: snap.seq,
                data: update,
                chat,
            }));
        }
        snap
    }

    /// Copies the engines' state (each lock held only to copy) into API form, and
    /// the stream update from what was sent before (`None`: nothing changed) and the
    /// new chat lines (`None`: none).
    #[allow(clippy::type_complexity)]
    fn build(&self, seq: u64, before: Sent) -> (Snapshot, (Option<String>, Option<String>), Sent) {
        let clock = wall_clock();
        let now = clock.mono;
        let src = &self.sources;
        let mut relay_info = None;
        let pilots = src.relay.as_ref().map(|r| {
            let (views, links, name, hub, thinning) = {
                let e = lock(r);
                (
                    e.pilots_with_datagrams(now),
                    e.links(),
                    e.config().name.clone(),
                    e.config().hub,
                    api::relays::thinning(&e.config().tiers, e.stats()),
                )
            };
            relay_info = Some(RelayInfo {
                name,
                hub,
                links: self.links(&links, &clock),
                thinning,
            });
            let mut pilots = api::pilots::pilots(&views, &clock);
            lock(&self.rates).apply(&views, &mut pilots, now);
            let from: Vec<std::net::IpAddr> =
                api::pilots::shown(&views).map(|v| v.addr.ip()).collect();
            (pilots, from)
        });
        let (pilots, from) = pilots.unzip();
        let chat = pilots.as_ref().zip(from).and_then(|(p, from)| {
            let said = p.iter().zip(from);
            let fresh = lock(&self.chat).observe(said, clock.now_secs());
            for l in &fresh {
                tracing::debug!(callsign = %l.callsign, text = %l.text, "chat line");
            }
            (!fresh.is_empty()).then(|| serde_json::to_string(&fresh).unwrap_or_default())
        });
        let servers = src.master.as_ref().map(|m| {
            let mut list: Vec<(std::net::SocketAddr, ServerEntry)> = {
                let e = lock(m);
                let t = e.table();
                t.listed()
                    .map(|l| (l.addr, api::servers::entry(&l, &clock)))
                    .collect()
            };
            if let Some(n) = &src.names {
                let book = lock(n);
                for (a, s) in &mut list {
                    s.name = book.name(a).map(str::to_string);
                }
            }
            if let Some(l) = &src.list {
                curated_servers(l, &mut list, clock.now_secs() as i64);
            }
            list.into_iter()
                .map(|(_, s)| s)
                .collect::<Vec<ServerEntry>>()
        });
        let (published, dns) = match &src.directory {
            Some(d) => {
                let d = lock(d);
                let published = d
                    .relays()
                    .iter()
                    .map(|t| api::relays::published(t, &clock))
                    .collect();
                let records = d
                    .records()
                    .map(|rs| rs.iter().map(api::dns::record).collect())
                    .unwrap_or_default();
                let dns = DnsBody {
                    generated_at: clock.now_secs(),
                    zone: d.origin().to_string(),
                    serial: d.serial(),
                    records,
                };
                (published, Some(dns))
            }
            None => (Vec::new(), None),
        };
        let (update, after) = match &pilots {
            Some(p) => {
                let (u, after) = before.diff(p, clock.now_secs());
                let data = (!u.is_empty()).then(|| serde_json::to_string(&u).unwrap_or_default());
                (data, after)
            }
            None => (None, before),
        };
        let snap = Snapshot {
            seq,
            taken: Some(now),
            clock,
            pilots,
            pilots_json: OnceLock::new(),
            servers,
            relays: RelaysBody {
                generated_at: clock.now_secs(),
                relay: relay_info,
                published,
            },
            dns,
        };
        (snap, (update, chat), after)
    }

    /// The relay links now (not from the last snapshot): the admin API shows a
    /// change at once.
    pub(crate) fn links_now(&self) -> Vec<Link> {
        let Some(r) = &self.sources.relay else {
            return Vec::new();
        };
        let engine = lock(r).links();
        self.links(&engine, &wall_clock())
    }

    /// The configured peers in configuration order, each with its engine traffic
    /// when its name resolved; then any engine link no name accounts for.
    fn links(&self, engine: &[relay::LinkView], clock: &Clock) -> Vec<Link> {
        use config::Kind;
        let Some(peers) = &self.sources.peers else {
            return engine.iter().map(|l| api::relays::link(l, clock)).collect();
        };
        let state = lock(peers);
        let mut used = vec![false; engine.len()];
        let mut out = Vec::new();
        for (name, addr) in state.peers.entries() {
            let kind = match name.kind {
                Kind::Relay => relay::LinkKind::Relay,
                Kind::Crossfeed => relay::LinkKind::Crossfeed,
            };
            let found =
                addr.and_then(|a| engine.iter().position(|l| l.kind == kind && l.addr == a));
            match found {
                Some(i) => {
                    used[i] = true;
                    let mut l = api::relays::link(&engine[i], clock);
                    l.name = name.text.clone();
                    out.push(l);
                }
                None => out.push(api::relays::unresolved(kind, &name.text)),
            }
        }
        for (l, u) in engine.iter().zip(used) {
            if !u {
                out.push(api::relays::link(l, clock));
            }
        }
        out
    }

    /// Keeps snapshots coming once a second while any stream is open, and every
    /// [`CHAT_SAMPLE`] while a relay runs (the chat log sees every line).
    pub async fn run(self: Arc<Self>, stop: lifecycle::Stop) -> anyhow::Result<()> {
        loop {
            let next = if self.updates.receiver_count() > 0 {
                let s = self.current().await;
                s.taken.unwrap_or_else(Instant::now) + SNAPSHOT_INTERVAL
            } else if self.has_relay() {
                let s = self.current().await;
                s.taken.unwrap_or_else(Instant::now) + CHAT_SAMPLE
            } else {
                Instant::now() + Duration::from_millis(250)
            };
            tokio::select! {
                _ = tokio::time::sleep_until(next.into()) => {}
                _ = stop.stopped() => return Ok(()),
            }
        }
    }
}

/// The curated list's published servers merged into `list` (ordered by address):
/// those also in the master's table gain the `curated` source, the others are added
/// from their last answer ([`serverlist::merged::merge`]).
fn curated_servers(
    l: &crate::services::master::list::List,
    list: &mut Vec<(std::net::SocketAddr, ServerEntry)>,
    now: i64,
) {
    let grace = lock(&l.options).grace;
    let published = lock(&l.catalog).published(now, grace);
    serverlist::merged::merge(
        list,
        published,
        |_| true,
        |s, names| s.sources.extend(names.into_iter().map(String::from)),
        |p, a, names| {
            api::servers::probed(api::servers::Probed {
                address: p.addr.to_string(),
                gamedir: p.gamedir.clone(),
                name: query::strip_colors(&a.info.name),
                map: a.info.map.clone(),
                players: a.info.players,
                max: a.info.max,
                bots: a.info.bots,
                password: a.info.password,
                version: a.info.version.clone(),
                protocol: a.info.protocol,
                at: a.at.max(0) as u64,
                first_seen: a.first_seen.max(0) as u64,
                ping_ms: a.ping_ms,
                sources: names.into_iter().map(String::from).collect(),
            })
        },
    );
}
