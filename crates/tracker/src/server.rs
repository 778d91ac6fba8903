//! fgtracker's side of one reporting connection (`fgt_ident.php`,
//! `fgt_read_V20151207.php`, `fgt_read_NOWAIT.php`, `fgt_connection_mgr.php`), as a
//! sans-IO state machine.
//!
//! The driver owns the accepted socket: it feeds what is read to
//! [`ServerConn::received`] and acts on the [`Event`]s (answering
//! [`Event::Hello`] with [`ServerConn::accept`] or [`ServerConn::refuse`] once it has
//! checked its whitelist, storing each [`Event::Message`] as one transaction), writes
//! what [`ServerConn::poll_transmit`] returns, arms a timer at
//! [`ServerConn::poll_timeout`], and closes the socket once [`ServerConn::is_closed`]
//! and everything has been written.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use crate::control;
pub use crate::control::Ident;
use crate::message::{parse_line, parse_nowait_line, split_message, Line, Parsed, PHP_TRIM};
use crate::wire::{frame, Framer};

/// Limits and timing; [`Default`] is fgtracker's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerConfig {
    /// Bytes of one message, at most (the tracker has no limit; fgms puts one
    /// POSITION line, about 100 bytes, per pilot into one message, so 8 MiB is tens of
    /// thousands of pilots). A longer message closes the connection. Also bounds the
    /// messages held while the driver decides on the identification.
    pub max_message: usize,
    /// Bytes of one message, at most, until the driver accepts the identification:
    /// the greeting and the identification are a few dozen bytes, so a stranger
    /// cannot make an unidentified connection hold more (issue 20, item 7).
    pub max_unidentified: usize,
    /// Time from connect to identification, at most (fgtracker: four 5 s stages).
    pub identify_within: Duration,
    /// Silence before each PING (fgtracker: 60 s).
    pub ping_every: Duration,
    /// Silence before closing (fgtracker: 240 s, after PINGs at 60, 120, 180 s).
    pub close_after: Duration,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            max_message: 8 * 1024 * 1024,
            max_unidentified: 4096,
            identify_within: Duration::from_secs(20),
            ping_every: Duration::from_secs(60),
            close_after: Duration::from_secs(240),
        }
    }
}

/// What the driver must act on.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// The client identified itself. The driver checks its whitelist (fgtracker: the
    /// peer's IP, else for V20151207 the FQDN resolving to it) and answers with
    /// [`ServerConn::accept`] or [`ServerConn::refuse`]; messages that arrive in the
    /// meantime wait.
    Hello(Ident),
    /// One message, to store as one transaction; it has been answered `OK` (even when
    /// every line was ignored, as the tracker does).
    Message {
        /// The reports, in order.
        lines: Vec<Line>,
        /// Lines skipped without harm (fgms garbage, wrong password field, wrong field
        /// count, invalid UTF-8).
        ignored: usize,
    },
    /// The client broke the protocol (a fatal line, whose whole message is dropped
    /// and not acknowledged; an unsupported protocol; a message too long); the
    /// connection is closing. The reason, for logs.
    Fatal(String),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// The first message is discarded unread.
    Greeting,
    /// The second message is the identification.
    Identifying,
    /// Waiting for the driver's accept or refuse.
    Answering { nowait: bool },
    /// Identified, fgms 0.13 protocol.
    V20151207,
    /// Identified, old protocol.
    NoWait,
    /// Closing: nothing more is read; what is queued is still written.
    Closed,
}

/// fgtracker's state for one connection.
#[derive(Debug)]
pub struct ServerConn {
    cfg: ServerConfig,
    framer: Framer,
    phase: Phase,
    /// Messages received while the driver decides on the identification.
    held: VecDeque<Vec<u8>>,
    held_bytes: usize,
    out: Vec<u8>,
    opened: Instant,
    /// When the client last sent a complete message.
    last_heard: Instant,
    /// PINGs already sent since `last_heard`.
    stage: u32,
    /// The secret of a `SECRET` first message (lobby to lobby).
    secret: Option<String>,
}

/// `base + step * k`, or `None` when that is beyond what `Instant` can hold.
fn nth_deadline(base: Instant, step: Duration, k: u32) -> Option<Instant> {
    step.checked_mul(k).and_then(|d| base.checked_add(d))
}

impl ServerConn {
    /// A connection accepted at `now`.
    pub fn new(cfg: ServerConfig, now: Instant) -> ServerConn {
        ServerConn {
            framer: Framer::new(cfg.max_unidentified),
            cfg,
            phase: Phase::Greeting,
            held: VecDeque::new(),
            held_bytes: 0,
            out: Vec::new(),
            opened: now,
            last_heard: now,
            stage: 0,
            secret: None,
        }
    }

    /// The secret the client's first message carried (`control::greeting`), if any:
    /// the driver compares it with the one configured for the relay.
    pub fn greeting_secret(&self) -> Option<&str> {
        self.secret.as_deref()
    }

    /// Takes bytes read from the client; returns what the driver must act on, in
    /// order. Nothing is read once the connection is closing.
    pub fn received(&mut self, bytes: &[u8], now: Instant) -> Vec<Event> {
        let mut events = Vec::new();
        if self.phase == Phase::Closed {
            return events;
        }
        self.framer.push(bytes);
        while self.phase != Phase::Closed {
            let Some(next) = self.framer.next_frame() else {
                break;
            };
            match next {
                Err(e) => {
                    events.push(Event::Fatal(format!("message too long: {e}")));
                    self.close();
                }
                Ok(msg) => {
                    // Any complete message, PONG and DEBUG included, proves life.
                    self.last_heard = now;
                    self.stage = 0;
                    self.on_message(msg, &mut events);
                }
            }
        }
        events
    }

    fn on_message(&mut self, msg: Vec<u8>, events: &mut Vec<Event>) {
        match self.phase {
            Phase::Greeting => {
                // fgtracker discards it unread; a lobby relay may prove a secret in it.
                self.secret = std::str::from_utf8(&msg)
                    .ok()
                    .and_then(control::greeting_secret)
                    .map(str::to_string);
                self.phase = Phase::Identifying;
            }
            Phase::Identifying => {
                let text = String::from_utf8_lossy(&msg);
                match control::parse_ident(&text) {
                    Some(ident) => {
                        self.phase = Phase::Answering {
                            nowait: ident == Ident::NoWait,
                        };
                        events.push(Event::Hello(ident));
                    }
                    None => {
                        let tag = text.split(' ').next().unwrap_or("");
                        events.push(Event::Fatal(format!("unsupported protocol {tag:?}")));
                        self.close();
                    }
                }
            }
            Phase::Answering { .. } => {
                if self.held_bytes.saturating_add(msg.len()) > self.cfg.max_unidentified {
                    events.push(Event::Fatal(
                        "too much sent before the identification was answered".to_string(),
                    ));
                    self.close();
                } else {
                    self.held_bytes += msg.len();
                    self.held.push_back(msg);
                }
            }
            Phase::V20151207 => self.on_v20151207(&msg, events),
            Phase::NoWait => self.on_nowait(&msg, events),
            Phase::Closed => {}
        }
    }

    /// One message of an identified fgms 0.13: one transaction, one `OK`.
    fn on_v20151207(&mut self, msg: &[u8], events: &mut Vec<Event>) {
        if msg == control::PING.as_bytes() {
            self.reply(control::PONG);
            return;
        }
        if msg == control::PONG.as_bytes()
            || msg.starts_with(control::DEBUG.as_bytes())
            || msg.starts_with(control::ERROR.as_bytes())
        {
            return;
        }
        let mut lines = Vec::new();
        let mut ignored = 0;
        for raw in msg.split(|&b| b == b'\n') {
            let raw = trim_bytes(raw);
            if raw.is_empty() {
                continue;
            }
            // The tracker checks the encoding line by line.
            let Ok(text) = std::str::from_utf8(raw) else {
                ignored += 1;
                continue;
            };
            match parse_line(text) {
                Parsed::Line(line) => lines.push(line),
                Parsed::Ignored(_) => ignored += 1,
                Parsed::Fatal(why) => {
                    // Rolled back: none of the message's lines reach the driver.
                    self.reply(&control::not_recognized(text));
                    events.push(Event::Fatal(format!("line {text:?} not recognized: {why}")));
                    self.close();
                    return;
                }
            }
        }
        events.push(Event::Message { lines, ignored });
        self.reply(control::OK);
    }

    /// One message of an old `NOWAIT` fgms: everything is acknowledged.
    ///
    /// As the tracker: a message containing fgms garbage is `OK`ed unread, a first
    /// field `PING` gets `PONG` then `OK`, `PONG` gets `OK`. Otherwise the lines are
    /// read with [`parse_nowait_line`] (the tracker reads the whole message as one
    /// line; old fgms sent one line per message, so splitting on `\n` changes nothing
    /// for them) and the message is `OK`ed. The tracker closes on an unknown message
    /// type here; following the notes ("every message answered with `OK`, no
    /// validation"), this server ignores it. PING and PONG produce no event.
    fn on_nowait(&mut self, msg: &[u8], events: &mut Vec<Event>) {
        let text = String::from_utf8_lossy(msg);
        let first = text.split(' ').next().unwrap_or("");
        if first == control::PING {
            self.reply(control::PONG);
        } else if first != control::PONG {
            let mut lines = Vec::new();
            let mut ignored = 0;
            for line in split_message(&text) {
                match parse_nowait_line(line) {
                    Parsed::Line(l) => lines.push(l),
                    Parsed::Ignored(_) | Parsed::Fatal(_) => ignored += 1,
                }
            }
            events.push(Event::Message { lines, ignored });
        }
        self.reply(control::OK);
    }

    /// Accepts the identification: queues `IDENTIFIED <name>` (`name` from the
    /// driver's whitelist, as fgtracker sends its own name for the server, not the
    /// client's) and processes the messages that waited, returning their events.
    /// Does nothing unless an identification is waiting for an answer.
    ///
    /// The events are usually none: fgms sends only a `DEBUG` line before it is
    /// identified. They are returned here so a held report is never stranded until
    /// the next read.
    pub fn accept(&mut self, name: &str) -> Vec<Event> {
        let mut events = Vec::new();
        let Phase::Answering { nowait } = self.phase else {
            return events;
        };
        self.reply(&control::identified(name));
        self.framer.set_max(self.cfg.max_message);
        self.phase = if nowait {
            Phase::NoWait
        } else {
            Phase::V20151207
        };
        while self.phase != Phase::Closed {
            let Some(msg) = self.held.pop_front() else {
                break;
            };
            self.held_bytes = self.held_bytes.saturating_sub(msg.len());
            self.on_message(msg, &mut events);
        }
        events
    }

    /// Refuses the client (not whitelisted): `ERROR FGTracker is closing your
    /// connection`, then close.
    pub fn refuse(&mut self) {
        self.close();
    }

    /// Bytes to write now (whole NUL-terminated frames), also after closing: the
    /// driver writes them, then closes the socket.
    pub fn poll_transmit(&mut self) -> Option<Vec<u8>> {
        (!self.out.is_empty()).then(|| std::mem::take(&mut self.out))
    }

    fn identified(&self) -> bool {
        matches!(self.phase, Phase::V20151207 | Phase::NoWait)
    }

    fn close_at(&self) -> Option<Instant> {
        self.last_heard.checked_add(self.cfg.close_after)
    }

    /// The next PING, if it comes before the close.
    fn next_ping(&self) -> Option<Instant> {
        let due = nth_deadline(
            self.last_heard,
            self.cfg.ping_every,
            self.stage.saturating_add(1),
        )?;
        match self.close_at() {
            Some(close) if due >= close => None,
            _ => Some(due),
        }
    }

    /// When [`ServerConn::handle_timeout`] must next run: the identification
    /// deadline, then the next PING or the close. `None` once closed.
    pub fn poll_timeout(&self) -> Option<Instant> {
        match self.phase {
            Phase::Closed => None,
            _ if !self.identified() => self.opened.checked_add(self.cfg.identify_within),
            _ => match (self.next_ping(), self.close_at()) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            },
        }
    }

    /// Runs what is due at `now`: closing an unidentified client after
    /// `identify_within` (the driver's pending answer included), and for an identified
    /// one a `PING` at every `ping_every` of silence and the close at `close_after`.
    /// Every close sends `ERROR FGTracker is closing your connection`, as fgtracker
    /// does for any reason. Calling early is harmless.
    pub fn handle_timeout(&mut self, now: Instant) {
        if self.phase == Phase::Closed {
            return;
        }
        if !self.identified() {
            if self
                .opened
                .checked_add(self.cfg.identify_within)
                .is_some_and(|at| now >= at)
            {
                self.close();
            }
            return;
        }
        if self.close_at().is_some_and(|at| now >= at) {
            self.close();
            return;
        }
        if self.next_ping().is_some_and(|at| now >= at) {
            let step = self.cfg.ping_every.as_nanos().max(1);
            let reached = now.saturating_duration_since(self.last_heard).as_nanos() / step;
            self.stage = u32::try_from(reached)
                .unwrap_or(u32::MAX)
                .max(self.stage.saturating_add(1));
            self.reply(control::PING);
        }
    }

    /// Whether the connection is closing: nothing more is read, and once
    /// [`ServerConn::poll_transmit`] is drained the driver closes the socket.
    pub fn is_closed(&self) -> bool {
        self.phase == Phase::Closed
    }

    /// Whether the client has been accepted (and with which protocol it is read).
    pub fn is_identified(&self) -> bool {
        self.identified()
    }

    /// Queues a reply; a client that provokes more unwritten replies than a message's
    /// worth is closed, so the output stays bounded too.
    fn reply(&mut self, text: &str) {
        let limit = self.cfg.max_message.saturating_add(64 * 1024);
        if self.out.len().saturating_add(text.len()) > limit {
            self.close();
        } else {
            frame(text, &mut self.out);
        }
    }

    fn close(&mut self) {
        if self.phase != Phase::Closed {
            self.phase = Phase::Closed;
            self.held.clear();
            self.held_bytes = 0;
            frame(control::CLOSING, &mut self.out);
        }
    }
}

/// PHP `trim()` on raw bytes (the tracker trims before checking the encoding).
fn trim_bytes(mut b: &[u8]) -> &[u8] {
    let is_trim = |c: &u8| PHP_TRIM.iter().any(|&t| t as u32 == u32::from(*c));
    while b.first().is_some_and(is_trim) {
        b = &b[1..];
    }
    while b.last().is_some_and(is_trim) {
        b = &b[..b.len() - 1];
    }
    b
}

#[cfg(test)]
mod tests {
    use super::*;

    fn identified(now: Instant) -> ServerConn {
        let mut s = ServerConn::new(ServerConfig::default(), now);
        let ev = s.received(b"\0V20151207 0.13.10 mp.example.org mpserver01\0", now);
        assert_eq!(
            ev,
            vec![Event::Hello(Ident::V20151207 {
                version: "0.13.10".into(),
                fqdn: "mp.example.org".into(),
                name: "mpserver01".into()
            })]
        );
        assert!(s.accept("mpserver01").is_empty());
        assert_eq!(s.poll_transmit(), Some(b"IDENTIFIED mpserver01\0".to_vec()));
        s
    }

    #[test]
    fn first_message_is_discarded_even_if_it_is_an_ident() {
        let t0 = Instant::now();
        let mut s = ServerConn::new(ServerConfig::default(), t0);
        assert!(s.received(b"V20151207 a b c\0", t0).is_empty());
        assert!(matches!(
            s.received(b"Please initialize\0", t0)[..],
            [Event::Fatal(_)]
        ));
        assert!(s.is_closed());
        assert_eq!(
            s.poll_transmit(),
            Some(b"ERROR FGTracker is closing your connection\0".to_vec())
        );
    }

    #[test]
    fn control_words_after_identification() {
        let t0 = Instant::now();
        let mut s = identified(t0);
        assert!(s
            .received(b"PING\0PONG\0DEBUG last_msg.size=1\0ERROR x\0", t0)
            .is_empty());
        assert_eq!(s.poll_transmit(), Some(b"PONG\0".to_vec()));
    }

    #[test]
    fn invalid_utf8_lines_are_ignored_one_by_one() {
        let t0 = Instant::now();
        let mut s = identified(t0);
        let ev = s.received(
            b"CONNECT a test c 2026-12-01 20:00:00\n\xff\xfe junk\n\n\0",
            t0,
        );
        assert!(matches!(&ev[..], [Event::Message { lines, ignored: 1 }] if lines.len() == 1));
        assert_eq!(s.poll_transmit(), Some(b"OK\0".to_vec()));
    }

    #[test]
    fn held_messages_are_processed_on_accept() {
        let t0 = Instant::now();
        let mut s = ServerConn::new(ServerConfig::default(), t0);
        let ev = s.received(
            b"\0V20151207 v f n\0DEBUG x\0CONNECT a test c 2026-12-01 20:00:00\0",
            t0,
        );
        assert_eq!(ev.len(), 1);
        let ev = s.accept("n");
        assert!(matches!(&ev[..], [Event::Message { lines, ignored: 0 }] if lines.len() == 1));
        assert_eq!(s.poll_transmit(), Some(b"IDENTIFIED n\0OK\0".to_vec()));
    }

    #[test]
    fn held_messages_are_bounded() {
        let t0 = Instant::now();
        let cfg = ServerConfig {
            max_unidentified: 16,
            ..ServerConfig::default()
        };
        let mut s = ServerConn::new(cfg, t0);
        s.received(b"\0NOWAIT\0", t0);
        assert!(s.received(b"0123456789\0", t0).is_empty());
        assert!(matches!(
            s.received(b"0123456789\0", t0)[..],
            [Event::Fatal(_)]
        ));
        assert!(s.is_closed());
    }

    #[test]
    fn too_long_message_is_fatal() {
        let t0 = Instant::now();
        let cfg = ServerConfig {
            max_message: 8,
            max_unidentified: 8,
            ..ServerConfig::default()
        };
        let mut s = ServerConn::new(cfg, t0);
        assert!(matches!(
            s.received(b"123456789", t0)[..],
            [Event::Fatal(_)]
        ));
        assert!(s.is_closed());
    }

    #[test]
    fn an_unidentified_client_holds_a_few_kib_an_identified_one_more() {
        // Issue 20, item 7: a stranger sending megabytes without a NUL before it
        // identified was buffered up to max_message (8 MiB).
        let t0 = Instant::now();
        let mut s = ServerConn::new(ServerConfig::default(), t0);
        let events = s.received(&vec![b'x'; 5000], t0);
        assert!(matches!(events[..], [Event::Fatal(_)]), "{events:?}");
        assert!(s.is_closed());
        // Identified, a long message (fgms puts a line per pilot in one) is fine.
        let mut s = ServerConn::new(ServerConfig::default(), t0);
        s.received(b"\0V20151207 v f n\0", t0);
        let _ = s.accept("n");
        let mut long = b"DEBUG ".to_vec();
        long.extend(std::iter::repeat_n(b'y', 100_000));
        long.push(0);
        let events = s.received(&long, t0);
        assert!(
            !events.iter().any(|e| matches!(e, Event::Fatal(_))),
            "{events:?}"
        );
        assert!(!s.is_closed());
    }

    #[test]
    fn unidentified_times_out() {
        let t0 = Instant::now();
        let mut s = ServerConn::new(ServerConfig::default(), t0);
        s.received(b"\0V20151207 v f n\0", t0 + Duration::from_secs(5));
        assert_eq!(s.poll_timeout(), Some(t0 + Duration::from_secs(20)));
        s.handle_timeout(t0 + Duration::from_secs(19));
        assert!(!s.is_closed());
        s.handle_timeout(t0 + Duration::from_secs(20));
        assert!(s.is_closed());
        assert!(s.accept("n").is_empty());
        assert_eq!(
            s.poll_transmit(),
            Some(b"ERROR FGTracker is closing your connection\0".to_vec())
        );
    }

    #[test]
    fn silence_pings_at_60_120_180_and_closes_at_240() {
        let t0 = Instant::now();
        let mut s = identified(t0);
        for k in 1..=3u64 {
            let due = t0 + Duration::from_secs(60 * k);
            assert_eq!(s.poll_timeout(), Some(due));
            s.handle_timeout(due);
            assert_eq!(s.poll_transmit(), Some(b"PING\0".to_vec()));
        }
        assert_eq!(s.poll_timeout(), Some(t0 + Duration::from_secs(240)));
        s.handle_timeout(t0 + Duration::from_secs(240));
        assert!(s.is_closed());
        assert_eq!(s.poll_timeout(), None);
    }

    #[test]
    fn any_complete_message_resets_silence() {
        let t0 = Instant::now();
        let mut s = identified(t0);
        s.handle_timeout(t0 + Duration::from_secs(60));
        let _ = s.poll_transmit();
        let t1 = t0 + Duration::from_secs(100);
        s.received(b"DEBUG last_msg.size=5\0", t1);
        assert_eq!(s.poll_timeout(), Some(t1 + Duration::from_secs(60)));
        // A partial message does not count.
        s.received(b"PON", t1 + Duration::from_secs(50));
        assert_eq!(s.poll_timeout(), Some(t1 + Duration::from_secs(60)));
    }

    #[test]
    fn trim_bytes_like_php() {
        assert_eq!(trim_bytes(b"\0\t x \r\x0b"), b"x");
        assert_eq!(trim_bytes(b" \x0c"), b"\x0c");
        assert_eq!(trim_bytes(b""), b"");
    }
}
