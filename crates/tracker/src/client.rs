//! fgms 0.13.10's tracker client (`fg_tracker.cxx`), as a sans-IO state machine.
//!
//! The relay queues report messages with [`Client::push`]; the client sends them once
//! the tracker has answered `IDENTIFIED`, keeps at most `max_in_flight` (25) of them
//! unacknowledged, pops one per `OK`, and puts the unacknowledged ones back at the
//! front of the queue when the connection drops, so a report is lost only when the
//! queue is full. The driver owns the TCP socket:
//!
//! 1. when [`Client::wants_connect`], connect; then call [`Client::connected`], or
//!    [`Client::disconnected`] if the attempt failed;
//! 2. feed what is read to [`Client::received`] and write what
//!    [`Client::poll_transmit`] returns, after every call;
//! 3. arm a timer at [`Client::poll_timeout`] and call [`Client::handle_timeout`];
//! 4. on EOF, a socket error, or [`Client::wants_close`], close the socket and call
//!    [`Client::disconnected`].

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use crate::control;
use crate::wire::{frame, Framer};

/// The longest tracker message the client reads; a longer one closes the connection
/// (the tracker only sends short control words).
pub const MAX_REPLY_FRAME: usize = 64 * 1024;

/// The most control bytes (PONG, error replies) kept unwritten; a tracker that
/// provokes more while the driver does not write closes the connection.
const MAX_CONTROL_OUT: usize = 1024 * 1024;

/// How the client behaves; [`Default`] is fgms 0.13.10's timing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientConfig {
    /// The software version sent in the identification line (fgms sends its own
    /// `VERSION`, e.g. `0.13.10`); the tracker stores it for its status page.
    pub version: String,
    /// The FQDN sent in the identification line: the tracker accepts a server whose
    /// IP is not whitelisted if this name is and resolves to the connecting address.
    pub fqdn: String,
    /// The server name sent last in the identification line (never read by the
    /// tracker; may contain spaces).
    pub server_name: String,
    /// Messages kept (unacknowledged and pending together); beyond it new messages
    /// are dropped and counted.
    pub max_queue: usize,
    /// Messages sent but not yet acknowledged, at most (fgms: 25).
    pub max_in_flight: usize,
    /// Wait between the lone `\0` and the identification line (fgms: `sleep(2)`).
    pub ident_delay: Duration,
    /// Silence from the tracker before each PING (fgms: 55 s).
    pub ping_after: Duration,
    /// Silent periods of `ping_after` before giving up: PING after each of the first
    /// `ping_stages - 1`, close at the last (fgms: 4, so PINGs at 55, 110, 165 s and a
    /// reconnect at 220 s).
    pub ping_stages: u32,
    /// Wait after a connection ends or fails before the next attempt (fgms: 30 s).
    pub reconnect_after: Duration,
    /// A secret shared with a lobby tracker, sent as the first message
    /// (`control::greeting`); empty: fgms's lone `\0`.
    pub secret: String,
}

impl Default for ClientConfig {
    fn default() -> Self {
        ClientConfig {
            version: format!("lobby-{}", env!("CARGO_PKG_VERSION")),
            fqdn: "localhost".to_string(),
            server_name: "lobby".to_string(),
            max_queue: 10_000,
            max_in_flight: 25,
            ident_delay: Duration::from_secs(2),
            ping_after: Duration::from_secs(55),
            ping_stages: 4,
            reconnect_after: Duration::from_secs(30),
            secret: String::new(),
        }
    }
}

/// Counters and gauges for logs and metrics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ClientStats {
    /// Messages accepted into the queue so far ([`Client::push`] and
    /// [`Client::restore`]).
    pub queued: u64,
    /// Message transmissions so far (a message resent after a reconnect counts again).
    pub sent: u64,
    /// `OK`s that acknowledged a message.
    pub acked: u64,
    /// Messages dropped because `max_queue` messages were already kept.
    pub dropped_queue_full: u64,
    /// Connections made after the first.
    pub reconnects: u64,
    /// Messages sent and not yet acknowledged, now.
    pub in_flight: usize,
    /// Messages waiting to be sent, now.
    pub pending: usize,
    /// Whether the tracker has answered `IDENTIFIED` on the current connection.
    pub identified: bool,
}

/// One TCP connection's state.
#[derive(Debug)]
struct Session {
    framer: Framer,
    /// When the identification line is due; `None` once it is queued.
    ident_at: Option<Instant>,
    identified: bool,
    /// When the tracker last sent a complete message (or the connection opened).
    last_heard: Instant,
    /// Silent periods already acted on since `last_heard`.
    stage: u32,
    /// Control frames not yet handed to the driver.
    out: Vec<u8>,
    /// The client gave up on this connection.
    closing: bool,
}

#[derive(Debug)]
enum Link {
    Down { retry_at: Instant },
    Up(Session),
}

/// fgms's tracker client: a bounded queue of report messages and the connection
/// state that delivers them.
#[derive(Debug)]
pub struct Client {
    cfg: ClientConfig,
    link: Link,
    pending: VecDeque<String>,
    in_flight: VecDeque<String>,
    stats: ClientStats,
    ever_connected: bool,
    tracker_name: Option<String>,
    last_error: Option<String>,
}

/// Whether the tracker acknowledges a message with `OK`. It answers `PING` with
/// `PONG` and ignores `PONG`, `DEBUG…` and `ERROR…`; fgms does not track the ones it
/// recognises (`PING`, `PONG`, `ERROR…`), and `DEBUG…` is added here so such a
/// message cannot wedge the window. Report messages are always tracked.
fn expects_ok(msg: &str) -> bool {
    !(msg == control::PING
        || msg == control::PONG
        || msg.starts_with(control::ERROR)
        || msg.starts_with(control::DEBUG))
}

/// `base + step * k`, or `None` when that is beyond what `Instant` can hold.
fn nth_deadline(base: Instant, step: Duration, k: u32) -> Option<Instant> {
    step.checked_mul(k).and_then(|d| base.checked_add(d))
}

impl Client {
    /// A client that wants its first connection at once.
    pub fn new(cfg: ClientConfig, now: Instant) -> Client {
        Client {
            cfg,
            link: Link::Down { retry_at: now },
            pending: VecDeque::new(),
            in_flight: VecDeque::new(),
            stats: ClientStats::default(),
            ever_connected: false,
            tracker_name: None,
            last_error: None,
        }
    }

    /// The configuration in use.
    pub fn config(&self) -> &ClientConfig {
        &self.cfg
    }

    /// Whether the driver should open a connection now: disconnected, and the
    /// reconnect delay has passed. It stays true until the driver reports the
    /// attempt with [`Client::connected`] or [`Client::disconnected`].
    pub fn wants_connect(&self, now: Instant) -> bool {
        matches!(self.link, Link::Down { retry_at } if now >= retry_at)
    }

    /// The TCP connection is open: queue the lone `\0` fgms starts with (the tracker
    /// discards the first message unread) and, after `ident_delay`, the
    /// identification line.
    ///
    /// fgms never resets its silence clock on connect (it can PING at once on a
    /// reconnect); here the silence is counted from the connection.
    pub fn connected(&mut self, now: Instant) {
        if matches!(self.link, Link::Up(_)) {
            self.requeue_in_flight();
        }
        if self.ever_connected {
            self.stats.reconnects += 1;
        }
        self.ever_connected = true;
        let mut out = Vec::new();
        frame(&control::greeting(&self.cfg.secret), &mut out);
        self.link = Link::Up(Session {
            framer: Framer::new(MAX_REPLY_FRAME),
            ident_at: Some(now.checked_add(self.cfg.ident_delay).unwrap_or(now)),
            identified: false,
            last_heard: now,
            stage: 0,
            out,
            closing: false,
        });
    }

    /// The connection ended or the attempt failed: unacknowledged messages go back
    /// to the front of the queue in their order, and the next attempt is due after
    /// `reconnect_after`.
    ///
    /// fgms retries at once after losing a connection and waits 30 s only after a
    /// failed connect; here every retry waits, so a tracker that closes at once is
    /// not hammered.
    pub fn disconnected(&mut self, now: Instant) {
        self.requeue_in_flight();
        let retry_at = now.checked_add(self.cfg.reconnect_after).unwrap_or(now);
        self.link = Link::Down { retry_at };
    }

    fn requeue_in_flight(&mut self) {
        while let Some(msg) = self.in_flight.pop_back() {
            self.pending.push_front(msg);
        }
    }

    fn held(&self) -> usize {
        self.pending.len() + self.in_flight.len()
    }

    /// Queues one report message (lines joined by `\n`). Returns false, and counts
    /// the drop, when `max_queue` messages are already kept: the new message is the
    /// one dropped, so what is kept stays in order. A `\0` in the message would split
    /// it into two frames, so it becomes `_`.
    pub fn push(&mut self, msg: String) -> bool {
        if self.held() >= self.cfg.max_queue {
            self.stats.dropped_queue_full += 1;
            return false;
        }
        let msg = if msg.contains('\0') {
            msg.replace('\0', "_")
        } else {
            msg
        };
        self.pending.push_back(msg);
        self.stats.queued += 1;
        true
    }

    /// Takes what the tracker sent. `IDENTIFIED…` opens the window; `OK` pops one
    /// unacknowledged message; `PING` is answered `PONG`; `PONG`, `DEBUG…` and
    /// `ERROR…` are only noted; anything else is answered
    /// `ERROR Unrecognized message "<msg>"` as fgms does (fgms answers `DEBUG…` that
    /// way too; the tracker never sends one). Every complete message resets the
    /// silence clock. A message longer than [`MAX_REPLY_FRAME`] makes the client ask
    /// to close.
    pub fn received(&mut self, bytes: &[u8], now: Instant) {
        let Link::Up(session) = &mut self.link else {
            return;
        };
        if session.closing {
            return;
        }
        session.framer.push(bytes);
        while let Some(next) = session.framer.next_frame() {
            let Ok(raw) = next else {
                session.closing = true;
                return;
            };
            session.last_heard = now;
            session.stage = 0;
            let text = String::from_utf8_lossy(&raw);
            if let Some(name) = text.strip_prefix(control::IDENTIFIED) {
                session.identified = true;
                self.tracker_name = Some(name.trim_start().to_string());
            } else if text == control::OK {
                // fgms pops nothing, silently, when nothing is in flight.
                if self.in_flight.pop_front().is_some() {
                    self.stats.acked += 1;
                }
            } else if text == control::PING {
                frame(control::PONG, &mut session.out);
            } else if text == control::PONG || text.starts_with(control::DEBUG) {
                // Only proof of life.
            } else if text.starts_with(control::ERROR) {
                self.last_error = Some(text.into_owned());
            } else {
                frame(&control::unrecognized(&text), &mut session.out);
            }
            if session.out.len() > MAX_CONTROL_OUT {
                session.closing = true;
                return;
            }
        }
    }

    /// Bytes to write now, as whole NUL-terminated frames: control replies first,
    /// then queued messages while identified and fewer than `max_in_flight` are
    /// unacknowledged. A message returned here counts as in flight; if the write
    /// fails, [`Client::disconnected`] puts it back.
    ///
    /// fgms follows every write with `DEBUG last_msg.size=…, msg_queue.size = …,
    /// msg_sent_queue.size = …`; the tracker discards those lines, so this client
    /// does not send them (half the frames for nothing). The only thing they did was
    /// reset the tracker's silence clock, which the reports and PINGs do anyway.
    pub fn poll_transmit(&mut self) -> Option<Vec<u8>> {
        let Link::Up(session) = &mut self.link else {
            return None;
        };
        if session.closing {
            session.out.clear();
            return None;
        }
        let mut bytes = std::mem::take(&mut session.out);
        if session.identified && session.ident_at.is_none() {
            while self.in_flight.len() < self.cfg.max_in_flight {
                let Some(msg) = self.pending.pop_front() else {
                    break;
                };
                frame(&msg, &mut bytes);
                self.stats.sent += 1;
                if expects_ok(&msg) {
                    self.in_flight.push_back(msg);
                }
            }
        }
        (!bytes.is_empty()).then_some(bytes)
    }

    /// When [`Client::handle_timeout`] must next run: the next connection attempt,
    /// the identification line, or the next silence stage. `None` while the client
    /// waits for the driver to close.
    pub fn poll_timeout(&self) -> Option<Instant> {
        match &self.link {
            Link::Down { retry_at } => Some(*retry_at),
            Link::Up(s) if s.closing => None,
            Link::Up(s) => {
                let silence =
                    nth_deadline(s.last_heard, self.cfg.ping_after, s.stage.saturating_add(1));
                match (s.ident_at, silence) {
                    (Some(a), Some(b)) => Some(a.min(b)),
                    (a, b) => a.or(b),
                }
            }
        }
    }

    /// Runs what is due at `now`: the identification line after `ident_delay`; after
    /// each `ping_after` of silence a `PING`, and at the `ping_stages`-th the client
    /// asks to close ([`Client::wants_close`]). A late call acts once, for the latest
    /// stage reached. Calling early is harmless.
    pub fn handle_timeout(&mut self, now: Instant) {
        let Link::Up(s) = &mut self.link else {
            return;
        };
        if s.closing {
            return;
        }
        if s.ident_at.is_some_and(|at| now >= at) {
            s.ident_at = None;
            let line =
                control::ident_line(&self.cfg.version, &self.cfg.fqdn, &self.cfg.server_name);
            frame(&line, &mut s.out);
        }
        let next = s.stage.saturating_add(1);
        if nth_deadline(s.last_heard, self.cfg.ping_after, next).is_some_and(|due| now >= due) {
            let step = self.cfg.ping_after.as_nanos().max(1);
            let reached = now.saturating_duration_since(s.last_heard).as_nanos() / step;
            s.stage = u32::try_from(reached).unwrap_or(u32::MAX).max(next);
            if s.stage >= self.cfg.ping_stages {
                s.closing = true;
            } else {
                frame(control::PING, &mut s.out);
            }
        }
    }

    /// Whether the client has given up on the current connection (silence, or a
    /// tracker message too long); the driver closes the socket and calls
    /// [`Client::disconnected`].
    pub fn wants_close(&self) -> bool {
        matches!(&self.link, Link::Up(s) if s.closing)
    }

    /// Every message kept, in sending order: unacknowledged first, then pending. For
    /// the queue file written at exit (fgms's `./queue_file`); messages may contain
    /// `\n`, so the file format must allow it.
    pub fn backlog(&self) -> Vec<String> {
        self.in_flight
            .iter()
            .chain(&self.pending)
            .cloned()
            .collect()
    }

    /// Puts saved messages (a previous [`Client::backlog`]) at the front of the
    /// queue, in their order. Only as many as fit under `max_queue` are kept, the
    /// first ones; the rest are counted as dropped.
    pub fn restore(&mut self, msgs: Vec<String>) {
        let room = self.cfg.max_queue.saturating_sub(self.held());
        let total = msgs.len();
        let kept: Vec<String> = msgs
            .into_iter()
            .take(room)
            .map(|m| {
                if m.contains('\0') {
                    m.replace('\0', "_")
                } else {
                    m
                }
            })
            .collect();
        self.stats.queued += kept.len() as u64;
        self.stats.dropped_queue_full += (total - kept.len()) as u64;
        for msg in kept.into_iter().rev() {
            self.pending.push_front(msg);
        }
    }

    /// Counters and the current queue sizes.
    pub fn stats(&self) -> ClientStats {
        ClientStats {
            in_flight: self.in_flight.len(),
            pending: self.pending.len(),
            identified: matches!(&self.link, Link::Up(s) if s.identified),
            ..self.stats
        }
    }

    /// The name the tracker gave in its last `IDENTIFIED` (its whitelist name for
    /// this server), for logs.
    pub fn tracker_name(&self) -> Option<&str> {
        self.tracker_name.as_deref()
    }

    /// The last `ERROR…` the tracker sent, for logs (it explains a close).
    pub fn last_error(&self) -> Option<&str> {
        self.last_error.as_deref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn identified_client(now: Instant) -> Client {
        let mut c = Client::new(ClientConfig::default(), now);
        c.connected(now);
        let t = now + Duration::from_secs(2);
        c.handle_timeout(t);
        c.received(b"IDENTIFIED test\0", t);
        let _ = c.poll_transmit();
        c
    }

    #[test]
    fn connect_sends_nul_then_ident_after_delay() {
        let t0 = Instant::now();
        let mut c = Client::new(ClientConfig::default(), t0);
        assert!(c.wants_connect(t0));
        assert_eq!(c.poll_timeout(), Some(t0));
        c.connected(t0);
        assert!(!c.wants_connect(t0));
        assert_eq!(c.poll_transmit(), Some(b"\0".to_vec()));
        assert_eq!(c.poll_timeout(), Some(t0 + Duration::from_secs(2)));
        c.handle_timeout(t0 + Duration::from_secs(1));
        assert_eq!(c.poll_transmit(), None);
        c.handle_timeout(t0 + Duration::from_secs(2));
        let want = format!(
            "V20151207 lobby-{} localhost lobby\0",
            env!("CARGO_PKG_VERSION")
        );
        assert_eq!(c.poll_transmit(), Some(want.into_bytes()));
    }

    #[test]
    fn messages_wait_for_identified() {
        let t0 = Instant::now();
        let mut c = Client::new(ClientConfig::default(), t0);
        c.connected(t0);
        assert!(c.push("CONNECT a test c 2026-12-01 20:00:00".into()));
        assert_eq!(c.poll_transmit(), Some(b"\0".to_vec()));
        c.received(b"IDENTIFIED early\0", t0);
        // Not before the identification line has gone out.
        assert_eq!(c.poll_transmit(), None);
        c.handle_timeout(t0 + Duration::from_secs(2));
        let out = c.poll_transmit().unwrap();
        assert!(out.ends_with(b"\0CONNECT a test c 2026-12-01 20:00:00\0"));
        assert_eq!(c.tracker_name(), Some("early"));
    }

    #[test]
    fn unknown_tracker_words_get_fgms_error() {
        let t0 = Instant::now();
        let mut c = identified_client(t0);
        c.received(b"HELLO\0PING\0PONG\0DEBUG x\0ERROR bad\0", t0);
        assert_eq!(
            c.poll_transmit(),
            Some(b"ERROR Unrecognized message \"HELLO\"\0PONG\0".to_vec())
        );
        assert_eq!(c.last_error(), Some("ERROR bad"));
    }

    #[test]
    fn silence_pings_three_times_then_closes() {
        let t0 = Instant::now();
        let mut c = identified_client(t0);
        let heard = t0 + Duration::from_secs(2);
        for k in 1..=3u64 {
            let due = heard + Duration::from_secs(55 * k);
            assert_eq!(c.poll_timeout(), Some(due));
            c.handle_timeout(due);
            assert_eq!(c.poll_transmit(), Some(b"PING\0".to_vec()), "stage {k}");
            assert!(!c.wants_close());
        }
        c.handle_timeout(heard + Duration::from_secs(220));
        assert!(c.wants_close());
        assert_eq!(c.poll_timeout(), None);
        c.disconnected(heard + Duration::from_secs(220));
        assert!(!c.wants_close());
        assert!(!c.wants_connect(heard + Duration::from_secs(249)));
        assert!(c.wants_connect(heard + Duration::from_secs(250)));
    }

    #[test]
    fn a_late_timer_acts_once() {
        let t0 = Instant::now();
        let mut c = identified_client(t0);
        c.handle_timeout(t0 + Duration::from_secs(170));
        assert_eq!(c.poll_transmit(), Some(b"PING\0".to_vec()));
        assert_eq!(c.poll_timeout(), Some(t0 + Duration::from_secs(222)));
    }

    #[test]
    fn oversized_tracker_frame_closes() {
        let t0 = Instant::now();
        let mut c = identified_client(t0);
        c.received(&vec![b'x'; MAX_REPLY_FRAME + 1], t0);
        assert!(c.wants_close());
    }

    #[test]
    fn control_messages_pushed_are_not_awaited() {
        let t0 = Instant::now();
        let mut c = identified_client(t0);
        c.push("PING".into());
        c.push("a\0b".into());
        assert_eq!(c.poll_transmit(), Some(b"PING\0a_b\0".to_vec()));
        assert_eq!(c.stats().in_flight, 1);
    }

    #[test]
    fn restore_goes_first_and_is_bounded() {
        let t0 = Instant::now();
        let cfg = ClientConfig {
            max_queue: 3,
            ..ClientConfig::default()
        };
        let mut c = Client::new(cfg, t0);
        c.push("new".into());
        c.restore(vec!["old1".into(), "old2".into(), "old3".into()]);
        assert_eq!(c.backlog(), ["old1", "old2", "new"]);
        let s = c.stats();
        assert_eq!((s.queued, s.dropped_queue_full, s.pending), (3, 1, 3));
    }
}
