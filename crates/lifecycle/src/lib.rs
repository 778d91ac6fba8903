//! One lifecycle for every part: how a part is started, watched and stopped.
//!
//! - **One stop signal** ([`Stop`]): a cancellation token for async tasks and a
//!   [`udp::Wake`] for worker threads blocked on their sockets. Raising it ends every
//!   task and thread at once; nothing polls a flag through a read timeout.
//! - **One place for signals** ([`Signals`]): SIGTERM, SIGINT and SIGHUP are installed
//!   before any `listening` line is printed, so a signal sent right after the lines is
//!   never lost.
//! - **One supervisor** ([`Supervisor`]): every long-lived thread and task is spawned
//!   through it and watched, and what happens when one fails is chosen by what it is:
//!   - UDP worker threads ([`Supervisor::spawn_thread`]) are *restarted* on the same
//!     socket, with an error log line and a count in `/stats` (their state lives in the
//!     engine, not the thread, and their socket stays bound, so a dead worker would
//!     silently leave a share of clients unanswered);
//!   - short-lived tasks of a part (one per telnet connection, DNS probe or admin
//!     change: [`Supervisor::tasks`]) are tracked too and waited for at shutdown; a
//!     panic in one is logged with the part's name and ends only that task;
//!   - every other part is a task ([`Supervisor::spawn_task`]: telnet, HTTP, DNS, the
//!     prober, the pusher, the state saver, simulated servers) whose error or panic
//!     *stops the process* cleanly (state is still saved) with the part's name and exit
//!     status 1, so a service manager restarts it whole instead of leaving it
//!     half-serving.
//!
//! Tests inject failures with the test-only environment variable `LOBBY_TEST_PANIC`
//! (see [`injected_panic`]).

pub mod hangup;
pub mod refusals;

pub use refusals::Refusals;

use anyhow::{Context, Result};
use futures_util::FutureExt;
use std::collections::{BTreeMap, HashSet};
use std::future::Future;
use std::io::Write;
use std::net::SocketAddr;
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

/// How long shutdown waits for the tasks to end before the rest are aborted (and logged).
const TASK_GRACE: Duration = Duration::from_secs(5);
/// A worker that panics again within this long of its last restart...
const RESTART_PAUSE_AFTER: Duration = Duration::from_secs(1);
/// ...waits this long before it runs again.
const RESTART_PAUSE: Duration = Duration::from_millis(100);

/// Prints the stable `listening <part> <proto> <addr:port>` line on standard output.
pub fn listening(part: &str, proto: &str, addr: SocketAddr) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "listening {part} {proto} {addr}");
    let _ = out.flush();
}

/// Binds a TCP listener for tokio through [`udp::bind_tcp`] (IPv6-only on IPv6, so
/// both families can share a port). `what` names the listener in the error.
pub fn tcp_listener(addr: SocketAddr, what: &str) -> Result<tokio::net::TcpListener> {
    let l = udp::bind_tcp(addr, 1024).with_context(|| format!("cannot bind {what}"))?;
    tokio::net::TcpListener::from_std(l).with_context(|| format!("cannot register {what} {addr}"))
}

/// The next connection on `l`. A failed accept (out of descriptors, a connection
/// reset before it was accepted) is passed to `failed` (a counter), logged with
/// `what` (at warn at most once a second across listeners), and followed by a short
/// pause, so a full descriptor table is neither a busy loop nor a log flood.
/// Cancel-safe: every TCP listener's accept loop selects on it beside its stop.
pub async fn accept(
    l: &tokio::net::TcpListener,
    what: &str,
    failed: impl Fn(),
) -> (tokio::net::TcpStream, SocketAddr) {
    loop {
        match l.accept().await {
            Ok(c) => return c,
            Err(e) => {
                static GATE: telemetry::LogGate = telemetry::LogGate::new();
                failed();
                if GATE.warn_at(udp::time::unix_secs() as u64) {
                    tracing::warn!(error = %e, "{what} accept failed");
                } else {
                    tracing::debug!(error = %e, "{what} accept failed");
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    }
}

/// Locks, ignoring poison: a worker that panicked while holding an engine must not
/// stop the others (the engines keep their tables consistent at every return).
pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The one stop signal: cloned into every task and thread.
#[derive(Clone)]
pub struct Stop {
    token: CancellationToken,
    wake: Arc<udp::Wake>,
}

impl Default for Stop {
    fn default() -> Stop {
        Stop::new()
    }
}

impl Stop {
    /// A new, lowered stop signal.
    pub fn new() -> Stop {
        Stop {
            token: CancellationToken::new(),
            wake: Arc::new(udp::Wake::new()),
        }
    }

    /// Raises it: every task's [`Stop::stopped`] resolves and every thread waiting on
    /// [`Stop::wake`] returns.
    pub fn raise(&self) {
        self.token.cancel();
        self.wake.raise();
    }

    /// Whether it was raised.
    pub fn is_raised(&self) -> bool {
        self.token.is_cancelled()
    }

    /// Resolves once it is raised.
    pub async fn stopped(&self) {
        self.token.cancelled().await
    }

    /// The wake-up for threads blocked on sockets.
    pub fn wake(&self) -> &udp::Wake {
        &self.wake
    }
}

/// What ended the wait for signals.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    /// SIGTERM or SIGINT (Ctrl-C).
    Stop,
    /// SIGHUP.
    Reload,
}

/// SIGTERM, SIGINT and SIGHUP, registered before any listener is announced.
pub struct Signals {
    term: tokio::signal::unix::Signal,
    int: tokio::signal::unix::Signal,
    hup: tokio::signal::unix::Signal,
}

impl Signals {
    /// Installs the handlers. Call before anything prints a `listening` line.
    pub fn install() -> Result<Signals> {
        use tokio::signal::unix::{signal, SignalKind};
        Ok(Signals {
            term: signal(SignalKind::terminate()).context("cannot handle SIGTERM")?,
            int: signal(SignalKind::interrupt()).context("cannot handle SIGINT")?,
            hup: signal(SignalKind::hangup()).context("cannot handle SIGHUP")?,
        })
    }

    /// The next signal.
    pub async fn next(&mut self) -> Signal {
        tokio::select! {
            _ = self.term.recv() => Signal::Stop,
            _ = self.int.recv() => Signal::Stop,
            _ = self.hup.recv() => Signal::Reload,
        }
    }

    /// The next SIGTERM or SIGINT (SIGHUP is ignored: commands without a
    /// configuration to reload).
    pub async fn next_stop(&mut self) {
        while self.next().await != Signal::Stop {}
    }
}

/// Parts in start order, each with what it waits for (`None`: serving).
type PartStates = Vec<(String, Option<String>)>;

/// Each part's readiness, set by the part as it starts.
#[derive(Clone, Default)]
pub struct Readiness {
    parts: Arc<Mutex<PartStates>>,
}

impl Readiness {
    /// Records `part` as serving (`Ok`) or waiting for something (`Err(what)`).
    pub fn set(&self, part: &str, state: Result<(), NotReady>) {
        let mut v = lock(&self.parts);
        let detail = state.err().map(|w| w.0);
        match v.iter_mut().find(|(p, _)| p == part) {
            Some(e) => e.1 = detail,
            None => v.push((part.to_string(), detail)),
        }
    }

    /// Every part in start order with what it waits for (`None`: serving).
    pub fn parts(&self) -> Vec<(String, Option<String>)> {
        lock(&self.parts).clone()
    }
}

/// What a part that does not serve yet waits for (`starting`), as
/// [`Readiness::parts`] reports it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct NotReady(pub String);

impl From<&str> for NotReady {
    fn from(what: &str) -> NotReady {
        NotReady(what.to_string())
    }
}

impl From<String> for NotReady {
    fn from(what: String) -> NotReady {
        NotReady(what)
    }
}

/// Worker restarts per part, shared with readers such as `/stats`.
pub type RestartCounts = Arc<Mutex<BTreeMap<String, u64>>>;

/// A part that failed and stops the process.
#[derive(Debug, Clone)]
pub struct Failure {
    /// The part, e.g. `relay-telnet`.
    pub part: String,
    /// What happened.
    pub reason: String,
}

/// Starts, watches and stops every long-lived thread and task of the process.
pub struct Supervisor {
    stop: Stop,
    threads: Mutex<Vec<(String, JoinHandle<()>)>>,
    /// (part, watcher, the task itself).
    tasks: Mutex<
        Vec<(
            String,
            tokio::task::JoinHandle<()>,
            tokio::task::AbortHandle,
        )>,
    >,
    /// Short-lived tasks ([`Tasks`]).
    short: TaskTracker,
    failures_tx: mpsc::UnboundedSender<Failure>,
    failures_rx: tokio::sync::Mutex<mpsc::UnboundedReceiver<Failure>>,
    restarts: RestartCounts,
}

impl Default for Supervisor {
    fn default() -> Supervisor {
        Supervisor::new()
    }
}

impl Supervisor {
    /// A supervisor with a fresh stop signal.
    pub fn new() -> Supervisor {
        let (failures_tx, failures_rx) = mpsc::unbounded_channel();
        Supervisor {
            stop: Stop::new(),
            threads: Mutex::new(Vec::new()),
            tasks: Mutex::new(Vec::new()),
            short: TaskTracker::new(),
            failures_tx,
            failures_rx: tokio::sync::Mutex::new(failures_rx),
            restarts: Arc::new(Mutex::new(BTreeMap::new())),
        }
    }

    /// The stop signal every part watches.
    pub fn stop(&self) -> &Stop {
        &self.stop
    }

    /// Restarts per part so far.
    pub fn restarts(&self) -> BTreeMap<String, u64> {
        lock(&self.restarts).clone()
    }

    /// The live restart counters, for `/stats`.
    pub fn restart_counts(&self) -> RestartCounts {
        self.restarts.clone()
    }

    /// Runs `body` on a named thread of `part`. `body` returns when the stop signal is
    /// raised; if it panics first, it is logged, counted and run again (after a pause
    /// when it panicked less than a second after its last restart, so a worker that
    /// fails on every datagram cannot burn a core in a restart loop).
    pub fn spawn_thread(&self, part: &str, body: impl Fn() + Send + Sync + 'static) -> Result<()> {
        let (name, stop, restarts) = (part.to_string(), self.stop.clone(), self.restarts.clone());
        let handle = std::thread::Builder::new()
            .name(part.chars().take(15).collect())
            .spawn(move || {
                let mut last_restart: Option<Instant> = None;
                loop {
                    let Err(panic) = std::panic::catch_unwind(AssertUnwindSafe(&body)) else {
                        return;
                    };
                    if stop.is_raised() {
                        return;
                    }
                    let reason = panic_message(&*panic);
                    *lock(&restarts).entry(name.clone()).or_default() += 1;
                    tracing::error!(part = %name, %reason, "worker panicked; restarted on the same socket");
                    if last_restart.is_some_and(|t| t.elapsed() < RESTART_PAUSE_AFTER) {
                        std::thread::sleep(RESTART_PAUSE);
                    }
                    last_restart = Some(Instant::now());
                }
            })
            .with_context(|| format!("cannot start a thread for {part}"))?;
        lock(&self.threads).push((part.to_string(), handle));
        Ok(())
    }

    /// Runs `task` for `part`. It should end when [`Stop::stopped`] resolves; an error
    /// or a panic before that stops the process, naming the part.
    pub fn spawn_task(&self, part: &str, task: impl Future<Output = Result<()>> + Send + 'static) {
        let (name, stop, tx) = (
            part.to_string(),
            self.stop.clone(),
            self.failures_tx.clone(),
        );
        let inner = tokio::spawn(task);
        let abort = inner.abort_handle();
        let watcher = tokio::spawn(async move {
            let reason = match inner.await {
                Ok(Ok(())) => return,
                Ok(Err(e)) => format!("{e:#}"),
                Err(e) if e.is_panic() => panic_message(&*e.into_panic()),
                Err(e) => e.to_string(),
            };
            if !stop.is_raised() {
                let _ = tx.send(Failure { part: name, reason });
            }
        });
        lock(&self.tasks).push((part.to_string(), watcher, abort));
    }

    /// A handle that spawns short-lived tasks of `part` under this supervisor.
    pub fn tasks(&self, part: &str) -> Tasks {
        Tasks {
            part: part.into(),
            tracker: self.short.clone(),
        }
    }

    /// Resolves when a part fails in a way that stops the process.
    pub async fn failed(&self) -> Failure {
        match self.failures_rx.lock().await.recv().await {
            Some(f) => f,
            // The supervisor holds a sender, so the channel never closes.
            None => std::future::pending().await,
        }
    }

    /// Raises the stop signal, then waits for every thread and task to end.
    pub async fn shutdown(&self) {
        self.stop.raise();
        let restarts = self.restarts();
        if !restarts.is_empty() {
            tracing::warn!(?restarts, "worker restarts during this run");
        }
        let tasks = std::mem::take(&mut *lock(&self.tasks));
        let deadline = tokio::time::Instant::now() + TASK_GRACE;
        for (part, watcher, task) in tasks {
            if tokio::time::timeout_at(deadline, watcher).await.is_err() {
                tracing::warn!(%part, "task did not stop within {TASK_GRACE:?}; abandoned");
                task.abort();
            }
        }
        self.short.close();
        if tokio::time::timeout_at(deadline, self.short.wait())
            .await
            .is_err()
        {
            tracing::warn!(
                open = self.short.len(),
                "short-lived tasks did not stop within {TASK_GRACE:?}; abandoned"
            );
        }
        let threads = std::mem::take(&mut *lock(&self.threads));
        let joined = tokio::task::spawn_blocking(move || {
            for (part, t) in threads {
                if t.join().is_err() {
                    tracing::error!(%part, "thread ended with a panic");
                }
            }
        });
        let _ = joined.await;
    }
}

/// Spawns the short-lived tasks of one part (a connection, a probe, a change) under
/// the [`Supervisor`]; cheap to clone.
#[derive(Clone)]
pub struct Tasks {
    part: Arc<str>,
    tracker: TaskTracker,
}

impl Tasks {
    /// Runs `task`; it should end by itself or when the stop signal is raised. A
    /// panic is logged with the part's name, then reaches whoever awaits the handle.
    pub fn spawn<T: Send + 'static>(
        &self,
        task: impl Future<Output = T> + Send + 'static,
    ) -> tokio::task::JoinHandle<T> {
        let part = self.part.clone();
        self.tracker.spawn(async move {
            match AssertUnwindSafe(task).catch_unwind().await {
                Ok(v) => v,
                Err(panic) => {
                    let reason = panic_message(&*panic);
                    tracing::error!(part = %part, %reason, "task panicked");
                    std::panic::resume_unwind(panic)
                }
            }
        })
    }
}

fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "panic".to_string()
    }
}

/// The test-only failure hook: `LOBBY_TEST_PANIC=relay-udp,dns-prober` makes each named
/// point panic once, the first time the part reaches it. Unset in production, where
/// this is one relaxed check of a value read once.
pub fn injected_panic(point: &str) {
    static POINTS: OnceLock<Option<Mutex<HashSet<String>>>> = OnceLock::new();
    let points = POINTS.get_or_init(|| {
        std::env::var("LOBBY_TEST_PANIC")
            .ok()
            .map(|v| Mutex::new(v.split(',').map(|s| s.trim().to_string()).collect()))
    });
    if let Some(p) = points {
        if lock(p).remove(point) {
            panic!("LOBBY_TEST_PANIC: injected panic in {point}");
        }
    }
}
