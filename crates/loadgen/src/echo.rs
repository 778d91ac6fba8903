//! `lobby load echo`: the bare UDP ceiling a master is compared with. Every request
//! gets `replies` datagrams of `size` bytes back, sent with recvmmsg/sendmmsg and no
//! logic at all: what the kernel can do with the same reply sizes.

use anyhow::{bail, Context, Result};
use std::net::{SocketAddr, UdpSocket};
use std::sync::Arc;
use std::thread::JoinHandle;
use udp::{BindOptions, Ready, RecvBatch, SendBatch, Wake};

/// Flags of `lobby load echo`.
#[derive(clap::Args, Debug, Clone)]
pub struct EchoArgs {
    /// UDP address to listen on (loopback).
    #[arg(long, default_value = "127.0.0.1:0")]
    pub listen: SocketAddr,
    /// Reply datagrams per request (a master's pages per scan).
    #[arg(long, default_value_t = 5)]
    pub replies: usize,
    /// Size of each reply in bytes (a master's page size).
    #[arg(long, default_value_t = 1398)]
    pub size: usize,
}

/// A running echo: one thread answering on one socket.
pub struct Echo {
    addr: SocketAddr,
    stop: Arc<Wake>,
    thread: JoinHandle<()>,
}

impl Echo {
    /// Checks the flags, binds and starts the thread.
    pub fn start(args: &EchoArgs) -> Result<Echo> {
        if args.replies == 0 || args.replies > 1024 || args.size == 0 || args.size > 65_000 {
            bail!("--replies must be 1-1024 and --size 1-65000");
        }
        let sock = Arc::new(udp::bind(args.listen, BindOptions::default())?);
        let addr = sock.local_addr()?;
        let stop = Arc::new(Wake::new());
        stop.watch(sock.clone());
        let (wake, replies, size) = (stop.clone(), args.replies, args.size);
        let thread = std::thread::Builder::new()
            .name("echo".into())
            .spawn(move || serve(&sock, replies, size, &wake))
            .context("cannot start the echo thread")?;
        Ok(Echo { addr, stop, thread })
    }

    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Stops the thread and waits for it.
    pub fn shutdown(self) {
        self.stop.raise();
        let _ = self.thread.join();
    }
}

/// Answers every datagram with `replies` page-shaped datagrams until `stop` is raised.
fn serve(sock: &UdpSocket, replies: usize, size: usize, stop: &Wake) {
    let mut rx = RecvBatch::new(64);
    let mut tx = SendBatch::new();
    // A page-shaped payload: the server-list header then filler.
    let mut page = vec![0u8; size];
    page[..6.min(size)].copy_from_slice(&b"\xff\xff\xff\xfff\n"[..6.min(size)]);
    let mut to = Vec::new();
    loop {
        match rx.recv_until(sock, None, stop) {
            Ok(Ready::Woken) => return,
            Ok(_) => {}
            Err(_) => continue,
        }
        to.clear();
        for (_, from) in rx.iter() {
            to.extend(std::iter::repeat_n(from, replies));
        }
        tx.send(sock, to.iter().map(|&t| (page.as_slice(), t)));
    }
}
