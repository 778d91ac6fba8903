//! The master state machine.

use crate::bans::{parse_net, Bans, MAX_BANS};
use crate::challenge::{admin_hash, Challenges};
use crate::config::Config;
use crate::ratelimit::{source_key, RateLimiter, Verdict};
use crate::state::{SavedServer, SavedState, STATE_VERSION};
use crate::stats::{Counter, Stats};
use crate::table::{PageForKey, Registered, Server, Table};
use sansio::Outbox;
use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::{Duration, Instant};
use subtle::ConstantTimeEq;
use xash::admin::{AdminChallengeReply, AdminChallengeRequest, AdminCommand, AdminReply};
use xash::filter::{Filter, Version};
use xash::info::InfoString;
use xash::master::{
    ChallengeReply, Heartbeat, NatConnect, Os, ScanRequest, ServerAdd, ServerInfo, ServerType,
    Shutdown,
};
use xash::text::{InfoQuery, InfoReply};

/// How long an outdated client's gamedir is remembered for the fake `info` reply.
const UPDATE_GAMEDIR_TTL: Duration = Duration::from_secs(5);
/// Bound on remembered outdated clients.
const UPDATE_GAMEDIR_MAX: usize = 4096;
/// Bound on locked-out admin sources (IPv4 addresses, IPv6 /64s). While it is full,
/// sources not in it are refused too (fail closed: a full table never disables lockout).
const LOCKOUT_MAX: usize = 4096;
/// Admin messages (challenge requests and commands) a source may send in a burst...
const ADMIN_BURST: f64 = 16.0;
/// ...and one more per this long.
const ADMIN_DECAY: Duration = Duration::from_secs(1);
/// Log lines about refused admin messages per second at most (the rest are counted
/// and the count is reported with the next line).
const ADMIN_LOGS_PER_SEC: u32 = 20;
/// How often bookkeeping is swept.
const SWEEP: Duration = Duration::from_secs(1);

fn server_burst(c: &Config) -> f64 {
    (2 * c.max_servers_per_source) as f64
}

/// The per-client reply byte budget: one second's worth at once, refilled per second.
fn reply_budget(c: &Config) -> (f64, f64) {
    let r = c.scan_reply_bytes_per_sec as f64;
    (r, r)
}

fn nat_budget(c: &Config) -> (f64, f64) {
    let r = f64::from(c.nat_announces_per_sec);
    (r, r)
}

type Hook = Box<dyn Fn() + Send + Sync>;

/// Called when the ban list changes (the binary saves the state file at once).
struct BanHook(Option<Hook>);

impl std::fmt::Debug for BanHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() {
            "BanHook(set)"
        } else {
            "BanHook(none)"
        })
    }
}

/// Why [`Engine::change_bans`] refused a ban: the list would exceed its cap.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the ban list is full ({MAX_BANS} networks)")]
pub struct BanListFull;

/// The engine.
#[derive(Debug)]
pub struct Engine {
    config: Config,
    stats: Arc<Stats>,
    challenges: Challenges,
    table: Table,
    bans: Bans,
    /// Client requests (scans, info queries).
    limiter: RateLimiter,
    /// Heartbeats are limited separately (a budget of their own, so no scanner flood
    /// can starve registration) and more generously: a host with its full quota of
    /// servers heartbeats them all at once when it starts.
    server_limiter: RateLimiter,
    /// Reply bytes per client.
    reply_budget: RateLimiter,
    /// NAT announces per client.
    nat_budget: RateLimiter,
    /// Where the next limited NAT announce starts in a scan's NAT servers (so a long
    /// list is announced in turn, not always its first servers).
    nat_turn: usize,
    /// Admin messages per source.
    admin_limiter: RateLimiter,
    update_gamedir: HashMap<SocketAddr, (Vec<u8>, Instant)>,
    /// Locked-out admin sources, by [`source_key`].
    lockout: HashMap<IpAddr, Instant>,
    /// A global allowance of admin log lines (a flood must not become a flood of log
    /// lines), in time since `epoch`.
    admin_logs: telemetry::LogGate,
    epoch: Instant,
    on_bans_changed: BanHook,
    /// The master's own listen addresses (fallback update address).
    local: Vec<SocketAddr>,
    next_sweep: Instant,
}

impl Engine {
    /// A new engine. `secret` keys the challenges (random per process); `now` is its epoch.
    pub fn new(config: Config, stats: Arc<Stats>, secret: [u8; 32], now: Instant) -> Engine {
        Engine {
            challenges: Challenges::new(secret, now, config.challenge_window),
            limiter: RateLimiter::new(config.rate_burst, config.rate_decay, config.rate_table_size),
            server_limiter: RateLimiter::new(
                server_burst(&config),
                config.rate_decay,
                config.rate_table_size,
            ),
            reply_budget: {
                let (burst, rate) = reply_budget(&config);
                RateLimiter::per_second(burst, rate, config.rate_table_size)
            },
            nat_budget: {
                let (burst, rate) = nat_budget(&config);
                RateLimiter::per_second(burst, rate, config.rate_table_size)
            },
            nat_turn: 0,
            admin_limiter: RateLimiter::new(ADMIN_BURST, ADMIN_DECAY, LOCKOUT_MAX),
            config,
            stats,
            table: Table::new(),
            bans: Bans::new(),
            update_gamedir: HashMap::new(),
            lockout: HashMap::new(),
            admin_logs: telemetry::LogGate::per_second(ADMIN_LOGS_PER_SEC),
            epoch: now,
            on_bans_changed: BanHook(None),
            local: Vec::new(),
            next_sweep: now + SWEEP,
        }
    }

    /// Tells the engine where it listens (the default "please update" address).
    pub fn set_local_addrs(&mut self, addrs: Vec<SocketAddr>) {
        self.local = addrs;
    }

    /// Applies a reloaded configuration; servers and bans are kept.
    pub fn reconfigure(&mut self, config: Config) {
        self.challenges.set_window(config.challenge_window);
        self.limiter
            .reconfigure(config.rate_burst, config.rate_decay, config.rate_table_size);
        self.server_limiter.reconfigure(
            server_burst(&config),
            config.rate_decay,
            config.rate_table_size,
        );
        let (burst, rate) = reply_budget(&config);
        self.reply_budget
            .reconfigure_per_second(burst, rate, config.rate_table_size);
        let (burst, rate) = nat_budget(&config);
        self.nat_budget
            .reconfigure_per_second(burst, rate, config.rate_table_size);
        self.config = config;
    }

    /// Calls `f` (outside any I/O of the engine's own) whenever an admin command changes
    /// the ban list, so the state file can be saved at once.
    pub fn on_bans_changed(&mut self, f: impl Fn() + Send + Sync + 'static) {
        self.on_bans_changed = BanHook(Some(Box::new(f)));
    }

    /// The configuration in force.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The counters.
    pub fn stats(&self) -> &Arc<Stats> {
        &self.stats
    }

    /// The server table.
    pub fn table(&self) -> &Table {
        &self.table
    }

    /// Banned networks.
    pub fn bans(&self) -> &Bans {
        &self.bans
    }

    /// Bans (`ban`) or unbans `nets`, as the admin command does: banned servers leave
    /// the table, the change hook runs. Returns the servers removed.
    pub fn change_bans(&mut self, ban: bool, nets: &[ipnet::IpNet]) -> Result<usize, BanListFull> {
        if ban && self.bans.len() + nets.len() > MAX_BANS {
            return Err(BanListFull);
        }
        let mut removed = 0;
        let mut changed = false;
        for net in nets {
            if ban {
                changed |= self.bans.insert(*net);
                removed += self.table.remove_net(net);
            } else {
                changed |= self.bans.remove(*net);
            }
        }
        self.stats.set(Counter::Servers, self.table.len() as u64);
        if changed {
            self.stats.inc(Counter::BanChanges);
            if let Some(f) = &self.on_bans_changed.0 {
                f();
            }
        }
        Ok(removed)
    }

    /// Queues `payload` (built for this reply) for `to`, counted.
    fn send(&self, out: &mut Outbox, to: SocketAddr, payload: &[u8]) {
        self.count_out(payload.len());
        out.push(to, payload);
    }

    fn count_out(&self, bytes: usize) {
        self.stats.inc(Counter::PacketsOut);
        self.stats.add(Counter::BytesOut, bytes as u64);
    }

    fn reject(&self, c: Counter) {
        self.stats.inc(c);
    }

    fn allowed(&mut self, ip: IpAddr, now: Instant) -> bool {
        let v = self.limiter.check(ip, now);
        self.verdict(v)
    }

    fn verdict(&self, v: Verdict) -> bool {
        match v {
            Verdict::Allow => true,
            Verdict::Throttled => {
                self.reject(Counter::DropRateLimited);
                false
            }
        }
    }

    /// Whether a reply of `bytes` to `ip` fits its reply budget (counted when not).
    fn reply_allowed(&mut self, ip: IpAddr, now: Instant, bytes: usize) -> bool {
        if self.config.scan_reply_bytes_per_sec == 0 {
            return true;
        }
        match self.reply_budget.check_cost(ip, now, bytes as f64) {
            Verdict::Allow => true,
            Verdict::Throttled => {
                self.reject(Counter::DropReplyBudget);
                false
            }
        }
    }

    /// Handles one datagram, appending replies to `out`.
    pub fn handle(&mut self, p: &[u8], from: SocketAddr, now: Instant, out: &mut Outbox) {
        self.stats.inc(Counter::PacketsIn);
        self.stats.add(Counter::BytesIn, p.len() as u64);
        if self.bans.contains(from.ip()) {
            return self.reject(Counter::DropBanned);
        }
        if p.starts_with(Heartbeat::HEADER) {
            self.heartbeat(p, from, now, out)
        } else if p.starts_with(ServerInfo::HEADER) {
            self.server_info(p, from, now)
        } else if p.starts_with(Shutdown::HEADER) {
            self.stats.inc(Counter::ShutdownsIgnored)
        } else if p.starts_with(ScanRequest::HEADER) {
            self.scan(p, from, now, out)
        } else if p.starts_with(InfoQuery::HEADER) {
            self.info_query(p, from, now, out)
        } else if p.starts_with(AdminChallengeRequest::HEADER) {
            self.admin_challenge(p, from, now, out)
        } else if p.starts_with(AdminCommand::HEADER) {
            self.admin_command(p, from, now, out)
        } else {
            self.reject(Counter::DropUnknown)
        }
    }

    fn heartbeat(&mut self, p: &[u8], from: SocketAddr, now: Instant, out: &mut Outbox) {
        let Ok(hb) = Heartbeat::decode(p) else {
            return self.reject(Counter::DropBadHeartbeat);
        };
        // A heartbeat reply is larger than the request: bound it like any reply.
        let v = self.server_limiter.check(from.ip(), now);
        if !self.verdict(v) {
            return;
        }
        self.stats.inc(Counter::Heartbeats);
        let reply = ChallengeReply {
            master_challenge: self.challenges.server(from, now),
            echo: hb.challenge,
        };
        let mut b = Vec::with_capacity(14);
        reply.encode(&mut b);
        self.send(out, from, &b);
    }

    fn server_info(&mut self, p: &[u8], from: SocketAddr, now: Instant) {
        let Ok(add) = ServerInfo::decode(p).and_then(|i| ServerAdd::from_info(&i.info)) else {
            return self.reject(Counter::DropBadInfo);
        };
        if add.version < self.config.min_server_version {
            return self.reject(Counter::DropOldServer);
        }
        if !self.challenges.check_server(from, add.challenge, now) {
            return self.reject(Counter::DropBadChallenge);
        }
        let expires = now + self.config.server_ttl;
        match self.table.register(
            from,
            Server::from_add(&add),
            now,
            now,
            expires,
            self.config.max_servers_per_source,
            self.config.max_servers,
        ) {
            Registered::Added => self.stats.inc(Counter::ServersAdded),
            Registered::Refreshed => self.stats.inc(Counter::ServersRefreshed),
            Registered::QuotaSource => self.reject(Counter::DropQuotaSource),
            Registered::QuotaNetwork => self.reject(Counter::DropQuotaNetwork),
            Registered::QuotaGlobal => self.reject(Counter::DropQuotaGlobal),
        }
        self.stats.set(Counter::Servers, self.table.len() as u64);
    }

    /// Whether the client must be sent the "please update" entry (xash3d-master's
    /// gating, except that a scan without `clver` is a tool's unless `require_clver`).
    fn outdated(&self, f: &Filter) -> bool {
        let Some(clver) = f.clver else {
            return self.config.require_clver;
        };
        if clver < self.config.client_min_version {
            return true;
        }
        let min_build = if clver < Version::new(0, 20, 0) {
            self.config.min_old_engine_buildnum
        } else {
            self.config.min_engine_buildnum
        };
        min_build != 0 && f.buildnum.is_none_or(|b| b < min_build)
    }

    fn update_addr(&self, v6: bool) -> Option<SocketAddr> {
        let configured = if v6 {
            self.config.update_addr_v6
        } else {
            self.config.update_addr_v4
        };
        configured.or_else(|| self.local.iter().copied().find(|a| a.is_ipv6() == v6))
    }

    fn scan(&mut self, p: &[u8], from: SocketAddr, now: Instant, out: &mut Outbox) {
        if !self.allowed(from.ip(), now) {
            return;
        }
        let Ok(req) = ScanRequest::decode(p) else {
            return self.reject(Counter::DropBadScan);
        };
        let Ok(filter) = Filter::from_info(&req.filter) else {
            return self.reject(Counter::DropBadFilter);
        };
        let v6 = from.is_ipv6();
        self.stats.inc(Counter::Scans);
        if self.outdated(&filter) {
            self.stats.inc(Counter::FakeLists);
            let servers: Vec<SocketAddr> = self.update_addr(v6).into_iter().collect();
            let mut b = Vec::new();
            xash::master::encode_page(filter.key, &servers, v6, &mut b);
            if !self.reply_allowed(from.ip(), now, b.len()) {
                return;
            }
            self.stats.inc(Counter::ListPages);
            self.send(out, from, &b);
            if self.update_gamedir.len() < UPDATE_GAMEDIR_MAX {
                let gamedir = filter
                    .gamedir
                    .clone()
                    .filter(|g| g.len() <= 31 && std::str::from_utf8(g).is_ok())
                    .unwrap_or_else(|| b"valve".to_vec());
                self.update_gamedir
                    .insert(from, (gamedir, now + UPDATE_GAMEDIR_TTL));
            }
            return;
        }
        if filter.clver.is_none() && filter.key.is_none() {
            // A tool (qstat's Steam-master types): one page per request, Valve's way.
            let per = xash::master::records_per_page(self.config.page_size, v6, false).max(1);
            let (page, more) = self
                .table
                .select_addrs(v6, &filter, req.region, req.last, per);
            let mut b = Vec::with_capacity(self.config.page_size);
            xash::master::encode_valve_page(&page, v6, !more, &mut b);
            if !self.reply_allowed(from.ip(), now, b.len()) {
                return;
            }
            self.stats.inc(Counter::ListPages);
            self.send(out, from, &b);
            return;
        }
        let (sel, cached) =
            self.table
                .select(v6, &filter, req.region, self.config.page_size, req.last);
        // The whole reply or nothing: a partial list would look complete to the client.
        let bytes: usize = sel.pages.iter().map(|p| p.len()).sum();
        if !self.reply_allowed(from.ip(), now, bytes) {
            return;
        }
        for i in 0..sel.pages.len() {
            self.stats.inc(Counter::ListPages);
            if cached {
                self.stats.inc(Counter::CachedPages);
            }
            let page = sel.page_for_key(i, filter.key);
            self.count_out(page.len());
            let id = match page {
                PageForKey::Shared(shared) => out.shared(shared.clone()),
                // Patched straight into the outbox's buffer.
                patched => out.encode(|b| patched.write_to(b)),
            };
            out.send(id, from);
        }
        if filter.announces_to_nat() && !sel.nat_servers.is_empty() {
            self.announce(&sel.nat_servers, from, now, out);
        }
    }

    /// Tells NAT servers about `client`, at most `nat_announces_per_sec` per client per
    /// second; when limited, the announces go to the next servers of the list in turn.
    fn announce(
        &mut self,
        servers: &[SocketAddr],
        client: SocketAddr,
        now: Instant,
        out: &mut Outbox,
    ) {
        let n = servers.len();
        let grant = match self.config.nat_announces_per_sec {
            0 => n,
            _ => {
                let want = u32::try_from(n).unwrap_or(u32::MAX);
                self.nat_budget.take_up_to(client.ip(), now, want) as usize
            }
        };
        let start = if grant < n {
            self.stats
                .add(Counter::NatAnnouncesLimited, (n - grant) as u64);
            self.nat_turn % n
        } else {
            0
        };
        self.nat_turn = self.nat_turn.wrapping_add(grant);
        if grant == 0 {
            return;
        }
        let mut b = Vec::new();
        NatConnect { client }.encode(&mut b);
        let id = out.payload(&b);
        for k in 0..grant {
            self.stats.inc(Counter::NatAnnounces);
            self.count_out(b.len());
            out.send(id, servers[(start + k) % n]);
        }
    }

    fn info_query(&mut self, p: &[u8], from: SocketAddr, now: Instant, out: &mut Outbox) {
        let Ok(q) = InfoQuery::decode(p) else {
            return self.reject(Counter::DropBadQuery);
        };
        if !self.allowed(from.ip(), now) {
            return;
        }
        let gamedir = self
            .update_gamedir
            .get(&from)
            .filter(|(_, until)| *until > now)
            .map(|(g, _)| g.clone())
            .unwrap_or_else(|| b"valve".to_vec());
        let mut info = InfoString::new();
        let fields: [(&str, &[u8]); 10] = [
            ("map", self.config.update_map.as_bytes()),
            ("dm", b"1"),
            ("team", b"0"),
            ("coop", b"0"),
            ("numcl", b"0"),
            ("maxcl", b"32"),
            ("gamedir", &gamedir),
            ("password", b"0"),
            ("dedicated", b"0"),
            ("host", self.config.update_title.as_bytes()),
        ];
        if q.protocol >= 49 {
            let _ = info.set("p", q.protocol.to_string());
        }
        for (k, v) in fields {
            if info.set(k, v).is_err() {
                return self.reject(Counter::DropBadQuery);
            }
        }
        let mut b = Vec::new();
        InfoReply::Info(info).encode(&mut b);
        if !self.reply_allowed(from.ip(), now, b.len()) {
            return;
        }
        self.stats.inc(Counter::InfoQueries);
        self.send(out, from, &b);
    }

    /// Whether admin messages from `ip` are ignored now: its IPv4 address or IPv6 /64
    /// sent a wrong hash recently, or the lockout table is full and it is not in it.
    fn locked_out(&self, ip: IpAddr, now: Instant) -> bool {
        match self.lockout.get(&source_key(ip)) {
            Some(&until) => until > now,
            None => self.lockout.len() >= LOCKOUT_MAX,
        }
    }

    /// Counts and logs (within the log budget) a refused admin message.
    fn admin_refused(&mut self, c: Counter, from: SocketAddr, now: Instant, reason: &str) {
        self.reject(c);
        if let Some(suppressed) = self
            .admin_logs
            .take(now.saturating_duration_since(self.epoch))
        {
            tracing::warn!(peer = %from, reason, suppressed, "admin message refused");
        }
    }

    /// The checks every admin message passes first: the source is in `admin_allow`,
    /// within its admin allowance, and not locked out.
    fn admin_gate(&mut self, from: SocketAddr, now: Instant) -> bool {
        let ip = from.ip();
        if !self.config.admin_allow.iter().any(|n| n.contains(&ip)) {
            self.admin_refused(
                Counter::DropAdminNotAllowed,
                from,
                now,
                "source not in admin_allow",
            );
            return false;
        }
        if self.admin_limiter.check(ip, now) == Verdict::Throttled {
            self.admin_refused(
                Counter::DropAdminRateLimited,
                from,
                now,
                "over the admin message allowance",
            );
            return false;
        }
        if self.locked_out(ip, now) {
            self.admin_refused(
                Counter::DropAdminLocked,
                from,
                now,
                "locked out after a wrong password",
            );
            return false;
        }
        true
    }

    fn admin_challenge(&mut self, p: &[u8], from: SocketAddr, now: Instant, out: &mut Outbox) {
        if AdminChallengeRequest::decode(p).is_err() {
            return self.admin_refused(
                Counter::DropBadAdmin,
                from,
                now,
                "malformed challenge request",
            );
        }
        if !self.admin_gate(from, now) {
            return;
        }
        if self.config.admins.is_empty() {
            return self.admin_refused(Counter::DropAdminAuth, from, now, "no admins configured");
        }
        let (m, h) = self.challenges.admin(from.ip(), now);
        self.stats.inc(Counter::AdminChallenges);
        tracing::debug!(peer = %from, "admin challenge sent");
        let mut b = Vec::new();
        AdminChallengeReply {
            master_challenge: m,
            hash_challenge: h,
        }
        .encode(&mut b);
        self.send(out, from, &b);
    }

    fn admin_command(&mut self, p: &[u8], from: SocketAddr, now: Instant, out: &mut Outbox) {
        if !self.admin_gate(from, now) {
            return;
        }
        let Ok(cmd) = AdminCommand::decode(p, self.config.hash_len) else {
            return self.admin_refused(Counter::DropBadAdmin, from, now, "malformed admin command");
        };
        // Only a well-formed attempt counts: one carrying the challenge this source was
        // sent (so it is not spoofed). Anything else is dropped without a lockout entry,
        // so strangers cannot fill the lockout table or lock the admin out.
        let Some(hc) = self
            .challenges
            .check_admin(from.ip(), cmd.master_challenge, now)
        else {
            return self.admin_refused(
                Counter::DropAdminBadChallenge,
                from,
                now,
                "no valid challenge for this source",
            );
        };
        // Check every admin, without stopping early, in constant time per compare.
        let mut who = None;
        for a in &self.config.admins {
            let want = admin_hash(
                &a.password,
                hc,
                self.config.hash_len,
                &self.config.hash_key,
                &self.config.hash_personal,
            );
            if bool::from(want.ct_eq(&cmd.hash)) && who.is_none() {
                who = Some(a.name.clone());
            }
        }
        let Some(admin) = who else {
            if self.lockout.len() < LOCKOUT_MAX {
                self.lockout
                    .insert(source_key(from.ip()), now + self.config.admin_lockout);
            }
            self.reject(Counter::DropAdminAuth);
            // Always logged: a wrong password with a valid challenge is a real attempt,
            // and the lockout bounds how often one source can make it.
            tracing::warn!(
                peer = %from,
                command = ?cmd.command,
                lockout_secs = self.config.admin_lockout.as_secs_f64(),
                "admin command refused: wrong password; source locked out"
            );
            return;
        };
        self.stats.inc(Counter::AdminCommands);
        let reply = self.run_admin(&cmd.command);
        tracing::info!(
            admin = %admin,
            peer = %from,
            command = ?cmd.command,
            ok = reply.ok,
            reply = ?reply.text,
            "admin command"
        );
        let mut b = Vec::new();
        reply.encode(&mut b);
        self.send(out, from, &b);
    }

    fn run_admin(&mut self, command: &str) -> AdminReply {
        let mut words = command.split_whitespace();
        let verb = words.next().unwrap_or("");
        let args: Vec<&str> = words.collect();
        let err = |text: String| AdminReply { ok: false, text };
        match verb {
            "ban" | "unban" if args.is_empty() => {
                err(format!("usage: {verb} IP|NETWORK [IP|NETWORK...]"))
            }
            "ban" | "unban" => {
                let mut nets = Vec::new();
                for a in &args {
                    match parse_net(a) {
                        Some(n) => nets.push(n),
                        None => return err(format!("not an IP address or network: {a}")),
                    }
                }
                let removed = match self.change_bans(verb == "ban", &nets) {
                    Ok(n) => n,
                    Err(e) => return err(e.to_string()),
                };
                let list: Vec<String> = nets.iter().map(|n| n.to_string()).collect();
                AdminReply {
                    ok: true,
                    text: if verb == "ban" {
                        format!("banned {} ({removed} servers removed)", list.join(" "))
                    } else {
                        format!("unbanned {}", list.join(" "))
                    },
                }
            }
            "list" => {
                let bans: Vec<String> = self.bans.iter().map(|n| n.to_string()).collect();
                let text = format!(
                    "{} servers; {} banned: {}",
                    self.table.len(),
                    bans.len(),
                    bans.join(" ")
                );
                AdminReply { ok: true, text }
            }
            _ => err(format!(
                "unknown command {verb:?}; commands: ban, unban, list"
            )),
        }
    }

    /// When [`Engine::handle_timeout`] should run next (the master sweeps once a
    /// second, so there is always a next time).
    pub fn poll_timeout(&self) -> Option<Instant> {
        Some(self.next_sweep)
    }

    /// Expires servers and bookkeeping (nothing is sent; `out` is the shared engine
    /// interface's).
    pub fn handle_timeout(&mut self, now: Instant, _out: &mut Outbox) {
        if now < self.next_sweep {
            return;
        }
        self.next_sweep = now + SWEEP;
        let gone = self.table.expire(now);
        if gone > 0 {
            self.stats.add(Counter::ServersExpired, gone as u64);
            self.stats.set(Counter::Servers, self.table.len() as u64);
        }
        self.update_gamedir.retain(|_, (_, until)| *until > now);
        self.lockout.retain(|_, until| *until > now);
        // The per-source tables need no sweep: a drained entry is a free slot.
        let evictions = [
            &self.limiter,
            &self.server_limiter,
            &self.reply_budget,
            &self.nat_budget,
            &self.admin_limiter,
        ]
        .iter()
        .map(|l| l.evictions())
        .sum();
        self.stats.set(Counter::RateEvictions, evictions);
    }

    /// The state worth saving: servers (with their remaining lifetime) and bans.
    pub fn export(&self, now: Instant) -> SavedState {
        let servers = self
            .table
            .listed()
            .map(|l| (l.addr, l.server, l.expires, l.since))
            .map(|(addr, s, expires, since)| SavedServer {
                addr,
                ttl_secs: expires.saturating_duration_since(now).as_secs(),
                listed_secs: now.saturating_duration_since(since).as_secs(),
                protocol: s.protocol,
                players: s.players,
                max: s.max,
                bots: s.bots,
                gamedir: s.gamedir.to_vec(),
                map: s.map.to_vec(),
                server_type: char::from(s.server_type.letter()),
                os: char::from(s.os.letter()),
                version: s.version.to_string(),
                region: s.region,
                flags: s.flags,
            })
            .collect();
        let bans = self.bans.iter().collect();
        SavedState {
            version: STATE_VERSION,
            servers,
            bans,
            list: None,
            registrations: None,
        }
    }

    /// Restores saved state (at start-up). Entries past their lifetime, over the
    /// quotas or banned are skipped; returns how many servers were restored.
    pub fn import(&mut self, state: &SavedState, now: Instant) -> usize {
        for &net in &state.bans {
            self.bans.insert(net);
        }
        let mut n = 0;
        for s in &state.servers {
            if s.ttl_secs == 0 || self.bans.contains(s.addr.ip()) {
                continue;
            }
            let server = Server {
                protocol: s.protocol,
                players: s.players,
                max: s.max,
                bots: s.bots,
                gamedir: s.gamedir.clone().into_boxed_slice(),
                map: s.map.clone().into_boxed_slice(),
                server_type: ServerType::from_letter(u8::try_from(s.server_type).unwrap_or(b'?')),
                os: Os::from_letter(u8::try_from(s.os).unwrap_or(b'?')),
                version: Version::parse(s.version.as_bytes()).unwrap_or_default(),
                region: s.region,
                flags: s.flags,
            };
            let ttl = Duration::from_secs(s.ttl_secs).min(self.config.server_ttl);
            let since = now
                .checked_sub(Duration::from_secs(s.listed_secs))
                .unwrap_or(now);
            if self.table.register(
                s.addr,
                server,
                now,
                since,
                now + ttl,
                self.config.max_servers_per_source,
                self.config.max_servers,
            ) == Registered::Added
            {
                n += 1;
            }
        }
        self.stats.set(Counter::Servers, self.table.len() as u64);
        n
    }
}

impl sansio::Engine for Engine {
    fn handle(&mut self, datagram: &[u8], from: SocketAddr, now: Instant, out: &mut Outbox) {
        Engine::handle(self, datagram, from, now, out);
    }
    fn poll_timeout(&self) -> Option<Instant> {
        Engine::poll_timeout(self)
    }
    fn handle_timeout(&mut self, now: Instant, out: &mut Outbox) {
        Engine::handle_timeout(self, now, out);
    }
}
