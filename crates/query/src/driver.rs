//! Many [`Session`]s at once over one tokio UDP socket per address family: the
//! driver only moves bytes between the sockets and the sessions, and wakes them
//! when [`Session::poll_timeout`] says so.

use crate::client_socket;
use crate::session::{Budget, ConnectResult, Kind, Outcome, Session, Step};
use std::collections::{HashMap, HashSet, VecDeque};
use std::io;
use std::net::SocketAddr;
use std::time::{Duration, Instant};
use tokio::net::UdpSocket;

/// How each server is asked, and how many at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueryOptions {
    /// How long to wait for each reply before retrying.
    pub timeout: Duration,
    /// Retries after a timeout.
    pub retries: u32,
    /// Sessions in flight at once (at least one runs).
    pub concurrency: usize,
    /// Each server's outcome within this, whatever it sends; `None`: the
    /// [`Budget::new`] bound from `timeout` and `retries` (a shorter one wins).
    pub deadline: Option<Duration>,
}

impl QueryOptions {
    /// The budget of each session of `kind`.
    pub fn budget(&self, kind: Kind) -> Budget {
        let mut b = Budget::new(kind, self.timeout, self.retries);
        if let Some(d) = self.deadline {
            b.overall = b.overall.min(d);
        }
        b
    }
}

/// How far a [`run_many`] has got, for a progress line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress {
    /// Servers with an outcome.
    pub done: usize,
    /// Distinct servers to ask.
    pub total: usize,
    /// Sessions running now.
    pub in_flight: usize,
}

/// Runs `kind` against every target with at most `opts.concurrency` in flight,
/// over one socket per address family. Results come back in target order, one per
/// distinct target.
///
/// `on_progress` is called once per wake-up (every datagram or timeout) while
/// sessions run, so the caller decides how often to show it.
pub async fn run_many(
    kind: Kind,
    targets: &[SocketAddr],
    opts: &QueryOptions,
    on_progress: impl FnMut(Progress),
) -> io::Result<Vec<(SocketAddr, Outcome)>> {
    let targets: Vec<(SocketAddr, Kind)> = targets.iter().map(|&a| (a, kind)).collect();
    run_mixed(&targets, opts, on_progress).await
}

/// [`run_many`] with a kind per target (a list of Xash and GoldSrc servers, each
/// asked what it answers); a target listed twice is asked once, as first listed.
pub async fn run_mixed(
    targets: &[(SocketAddr, Kind)],
    opts: &QueryOptions,
    mut on_progress: impl FnMut(Progress),
) -> io::Result<Vec<(SocketAddr, Outcome)>> {
    let any_v6 = targets.iter().any(|(a, _)| a.is_ipv6());
    let mut sockets = Sockets::bind(any_v6)?;
    let mut queries = Queries::new(targets, opts);
    loop {
        queries.start_sessions(Instant::now());
        sockets.send_all(&mut queries.outgoing).await;
        let Some(wake_at) = queries.next_timeout() else {
            break;
        };
        on_progress(queries.progress());
        let datagram = sockets.recv_until(wake_at).await;
        queries.handle_event(datagram, Instant::now());
    }
    sockets.send_all(&mut queries.outgoing).await;
    Ok(queries.into_results(targets))
}

/// The sessions of one [`run_many`]: those waiting to start, those running, and
/// those finished; and the datagrams they asked to send.
struct Queries {
    opts: QueryOptions,
    pending: VecDeque<(SocketAddr, Kind)>,
    total: usize,
    active: HashMap<SocketAddr, Session>,
    results: HashMap<SocketAddr, Outcome>,
    outgoing: Vec<(SocketAddr, Vec<u8>)>,
}

impl Queries {
    fn new(targets: &[(SocketAddr, Kind)], opts: &QueryOptions) -> Queries {
        let mut pending: VecDeque<(SocketAddr, Kind)> = targets.iter().copied().collect();
        let mut seen = HashSet::new();
        pending.retain(|(a, _)| seen.insert(*a));
        Queries {
            opts: QueryOptions {
                concurrency: opts.concurrency.max(1),
                ..*opts
            },
            total: pending.len(),
            pending,
            active: HashMap::new(),
            results: HashMap::new(),
            outgoing: Vec::new(),
        }
    }

    /// Starts waiting sessions until `concurrency` run.
    fn start_sessions(&mut self, now: Instant) {
        while self.active.len() < self.opts.concurrency {
            let Some((target, kind)) = self.pending.pop_front() else {
                break;
            };
            let (session, first) = Session::with_budget(kind, now, self.opts.budget(kind));
            self.outgoing.extend(first.into_iter().map(|d| (target, d)));
            self.active.insert(target, session);
        }
    }

    /// The earliest session deadline, or `None` when every session has ended.
    fn next_timeout(&self) -> Option<Instant> {
        self.active.values().map(Session::poll_timeout).min()
    }

    fn progress(&self) -> Progress {
        Progress {
            done: self.results.len(),
            total: self.total,
            in_flight: self.active.len(),
        }
    }

    /// A datagram goes to the session of the address it came from (others are
    /// ignored); a wake-up without one runs every session whose deadline passed.
    fn handle_event(&mut self, datagram: Option<(Vec<u8>, SocketAddr)>, now: Instant) {
        let mut steps = Vec::new();
        match datagram {
            Some((packet, from)) => {
                if let Some(s) = self.active.get_mut(&from) {
                    steps.push((from, s.handle(&packet, now)));
                }
            }
            None => {
                for (a, s) in self.active.iter_mut() {
                    if s.poll_timeout() <= now {
                        steps.push((*a, s.handle_timeout(now)));
                    }
                }
            }
        }
        for (a, step) in steps {
            self.apply(a, step);
        }
    }

    fn apply(&mut self, a: SocketAddr, step: Step) {
        match step {
            Step::Send(d) => self.outgoing.extend(d.into_iter().map(|p| (a, p))),
            Step::Wait => {}
            Step::Done(o) => {
                // Leave politely: the server would otherwise hold a slot for us.
                if let Outcome::Connect(ConnectResult::Accepted { .. }) = &o {
                    self.outgoing.push((a, Session::goodbye()));
                }
                self.active.remove(&a);
                self.results.insert(a, o);
            }
        }
    }

    fn into_results(self, targets: &[(SocketAddr, Kind)]) -> Vec<(SocketAddr, Outcome)> {
        targets
            .iter()
            .filter_map(|(a, _)| self.results.get(a).map(|o| (*a, o.clone())))
            .collect()
    }
}

/// One socket per address family (IPv6 only when a target needs it), with their
/// receive buffers.
struct Sockets {
    v4: UdpSocket,
    v6: Option<UdpSocket>,
    buf4: Vec<u8>,
    buf6: Vec<u8>,
}

impl Sockets {
    fn bind(v6: bool) -> io::Result<Sockets> {
        Ok(Sockets {
            v4: client_socket::bind_any(false)?,
            v6: if v6 {
                Some(client_socket::bind_any(true)?)
            } else {
                None
            },
            buf4: vec![0u8; 65536],
            buf6: vec![0u8; 65536],
        })
    }

    /// Sends and empties `out`. Sends go through `send_to().await`: a fresh tokio
    /// socket is not known to be writable yet, so `try_send_to` could drop the very
    /// first datagram.
    async fn send_all(&self, out: &mut Vec<(SocketAddr, Vec<u8>)>) {
        for (to, p) in out.drain(..) {
            let sock = if to.is_ipv6() {
                self.v6.as_ref()
            } else {
                Some(&self.v4)
            };
            if let Some(sock) = sock {
                // A full send buffer or an unreachable target ends as a timeout.
                let _ = sock.send_to(&p, to).await;
            }
        }
    }

    /// The next datagram on either socket, or `None` at `deadline` (or when a
    /// receive fails, e.g. on an ICMP error: the sessions then just check their
    /// deadlines).
    async fn recv_until(&mut self, deadline: Instant) -> Option<(Vec<u8>, SocketAddr)> {
        let Sockets { v4, v6, buf4, buf6 } = self;
        tokio::select! {
            r = v4.recv_from(buf4) => r.ok().map(|(n, from)| (buf4[..n].to_vec(), from)),
            r = async {
                match v6 {
                    Some(s) => s.recv_from(buf6).await,
                    None => std::future::pending().await,
                }
            } => r.ok().map(|(n, from)| (buf6[..n].to_vec(), from)),
            _ = tokio::time::sleep_until(deadline.into()) => None,
        }
    }
}
