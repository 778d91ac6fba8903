//! `lobby load echo`: the bare UDP ceiling a master is compared with. Every request
//! gets `replies` datagrams of `size` bytes back, sent with recvmmsg/sendmmsg and no
//! logic at all: what the kernel can do with the same reply sizes.

use crate::lifecycle::{listening, Signals, Stop};
use anyhow::{bail, Result};
use std::net::SocketAddr;
use std::process::ExitCode;
use udp::{BindOptions, Ready, RecvBatch, SendBatch};

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

/// Serves until Ctrl-C / SIGTERM.
pub async fn run(a: EchoArgs) -> Result<ExitCode> {
    if a.replies == 0 || a.replies > 1024 || a.size == 0 || a.size > 65_000 {
        bail!("--replies must be 1-1024 and --size 1-65000");
    }
    let mut signals = Signals::install()?;
    let sock = udp::bind(a.listen, BindOptions::default())?;
    listening("echo", "udp", sock.local_addr()?);
    let stop = Stop::new()?;
    let s2 = stop.clone();
    let worker = std::thread::spawn(move || {
        let mut rx = RecvBatch::new(64);
        let mut tx = SendBatch::new();
        // A page-shaped payload: the server-list header then filler.
        let mut page = vec![0u8; a.size];
        page[..6.min(a.size)].copy_from_slice(&b"\xff\xff\xff\xfff\n"[..6.min(a.size)]);
        let mut to = Vec::new();
        loop {
            match rx.recv_until(&sock, None, s2.wake()) {
                Ok(Ready::Woken) => return,
                Ok(_) => {}
                Err(_) => continue,
            }
            to.clear();
            for (_, from) in rx.iter() {
                to.extend(std::iter::repeat_n(from, a.replies));
            }
            tx.send(&sock, to.iter().map(|&t| (page.as_slice(), t)));
        }
    });
    signals.next_stop().await;
    stop.raise();
    let _ = tokio::task::spawn_blocking(move || worker.join()).await;
    Ok(ExitCode::SUCCESS)
}
