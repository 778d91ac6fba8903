//! `lobby master-admin`: sends an authenticated command to a master and prints its
//! acknowledgement. Every wait has a timeout, so it never hangs.

use anyhow::{bail, Context, Result};
use std::net::{SocketAddr, UdpSocket};
use std::process::ExitCode;
use std::time::{Duration, Instant};
use xash::admin::{AdminChallengeReply, AdminChallengeRequest, AdminCommand, AdminReply};

/// Flags of `lobby master-admin`.
#[derive(clap::Args, Debug)]
pub struct AdminArgs {
    /// The master, HOST:PORT (port defaults to 27010).
    #[arg(long, short = 'a', value_name = "HOST[:PORT]")]
    pub master: String,
    /// File holding the password (default: $LOBBY_ADMIN_PASSWORD, then $XASH3D_ADMIN_PASSWORD).
    #[arg(long, value_name = "FILE")]
    pub password_file: Option<std::path::PathBuf>,
    /// Seconds to wait for each reply.
    #[arg(long, default_value_t = 3.0)]
    pub timeout: f64,
    /// Admin hash length in bytes (must match the master's hash_len).
    #[arg(long, default_value_t = 64)]
    pub hash_len: usize,
    /// Admin hash key (must match the master's hash_key).
    #[arg(long, default_value = "Half-Life")]
    pub hash_key: String,
    /// Admin hash personalisation (must match the master's hash_personal).
    #[arg(long, default_value = "Freeman")]
    pub hash_personal: String,
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
    /// The command: `ban IP...`, `unban IP...` or `list`.
    #[arg(required = true, num_args = 1.., value_name = "COMMAND")]
    pub command: Vec<String>,
}

fn password(args: &AdminArgs) -> Result<String> {
    if let Some(f) = &args.password_file {
        let t = std::fs::read_to_string(f)
            .with_context(|| format!("cannot read password file {}", f.display()))?;
        return Ok(t.trim_end_matches(['\n', '\r']).to_string());
    }
    for var in ["LOBBY_ADMIN_PASSWORD", "XASH3D_ADMIN_PASSWORD"] {
        if let Ok(p) = std::env::var(var) {
            return Ok(p);
        }
    }
    bail!("no password: set LOBBY_ADMIN_PASSWORD or use --password-file")
}

fn resolve(s: &str) -> Result<SocketAddr> {
    Ok(udp::addr::resolve(s, 27010)?)
}

fn recv_matching<T>(
    sock: &UdpSocket,
    from: SocketAddr,
    deadline: Instant,
    decode: impl Fn(&[u8]) -> Option<T>,
) -> Option<T> {
    let mut buf = [0u8; 2048];
    loop {
        let left = deadline.checked_duration_since(Instant::now())?;
        sock.set_read_timeout(Some(left.max(Duration::from_millis(1))))
            .ok()?;
        match sock.recv_from(&mut buf) {
            Ok((n, src)) if src == from => {
                if let Some(t) = decode(&buf[..n]) {
                    return Some(t);
                }
            }
            Ok(_) => {}
            Err(_) => return None,
        }
    }
}

/// Runs the admin exchange. Exit codes: 0 done, 1 the master refused the command,
/// 3 no answer (wrong address, wrong password, or locked out), 2 usage errors.
pub fn run(args: AdminArgs) -> Result<ExitCode> {
    let pw = password(&args)?;
    let to = resolve(&args.master)?;
    if !(args.timeout.is_finite() && args.timeout > 0.0) {
        bail!("--timeout must be a positive number of seconds");
    }
    let timeout = Duration::from_secs_f64(args.timeout);
    let sock = UdpSocket::bind(if to.is_ipv6() { "[::]:0" } else { "0.0.0.0:0" })?;
    let mut req = Vec::new();
    AdminChallengeRequest.encode(&mut req);
    sock.send_to(&req, to)?;
    let Some(ch) = recv_matching(&sock, to, Instant::now() + timeout, |b| {
        AdminChallengeReply::decode(b).ok()
    }) else {
        eprintln!("lobby master-admin: no challenge from {to} within {:.1} s (wrong address, no admins configured, or this IP is locked out)", args.timeout);
        return Ok(ExitCode::from(3));
    };
    let hash = master::challenge::admin_hash(
        &pw,
        ch.hash_challenge,
        args.hash_len,
        &args.hash_key,
        &args.hash_personal,
    );
    let mut cmd = Vec::new();
    AdminCommand {
        master_challenge: ch.master_challenge,
        hash,
        command: args.command.join(" "),
    }
    .encode(&mut cmd);
    sock.send_to(&cmd, to)?;
    let Some(reply) = recv_matching(&sock, to, Instant::now() + timeout, |b| {
        AdminReply::decode(b).ok()
    }) else {
        eprintln!("lobby master-admin: no acknowledgement from {to} within {:.1} s (wrong password? the master then ignores this IP for a while)", args.timeout);
        return Ok(ExitCode::from(3));
    };
    if args.json {
        println!(
            "{}",
            serde_json::json!({"master": to.to_string(), "ok": reply.ok, "reply": reply.text})
        );
    } else {
        println!("{}", reply.text);
    }
    Ok(if reply.ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
