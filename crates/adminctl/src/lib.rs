//! `lobby admin`: fgms's admin CLI as a client of lobby's admin API (`lobby::http::admin`):
//! `show TOPIC`, `blacklist|relay|crossfeed add|delete ENTRY`, and `new-token NAME`
//! to make a line for the tokens file. Every wait has a timeout.
//!
//! Exit codes: 0 done; 1 the server refused the request (a bad entry, no relay in
//! that process, the state file not writable); 2 usage or local errors; 3 no answer
//! (nothing listens, or the timeout passed); 4 not authorized (401/403).

use anyhow::{bail, Context, Result};
use api::admin::{ChangeBody, ListBody, TrackerBody, UptimeBody, UsersBody, VersionBody};
use base64::Engine as _;
use clap::{Args, Subcommand, ValueEnum};
use httpclient::{header, Client, Method, Request, StatusCode};
use serde_json::Value;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

/// Flags of `lobby admin`.
#[derive(Args, Debug)]
pub struct AdminArgs {
    /// The lobby's HTTP listener (default: $LOBBY_ADMIN_URL, then http://127.0.0.1:8080).
    #[arg(long, value_name = "URL")]
    url: Option<String>,
    /// File holding the token: the token alone, or a tokens file (its first `NAME
    /// TOKEN` line). Default: $LOBBY_ADMIN_TOKEN.
    #[arg(long, value_name = "FILE")]
    token_file: Option<PathBuf>,
    /// Seconds to wait for the answer.
    #[arg(long, default_value_t = 10.0, value_name = "SECONDS")]
    timeout: f64,
    /// Print the API's JSON answer instead of text.
    #[arg(long, global = true)]
    json: bool,
    #[command(subcommand)]
    command: AdminCommand,
}

/// What `lobby admin` does.
#[derive(Subcommand, Debug)]
enum AdminCommand {
    /// Show stats, settings, version, uptime, a list, the tracker link or the pilots.
    Show {
        /// What to show.
        topic: Topic,
    },
    /// Add or delete a blacklist entry (IP or CIDR); kept across restarts.
    Blacklist {
        /// add or delete.
        action: Action,
        /// IP or CIDR.
        #[arg(value_name = "IP[/LEN]")]
        entry: String,
    },
    /// Add or delete a relay to exchange traffic with; kept across restarts.
    Relay {
        /// add or delete.
        action: Action,
        /// The relay.
        #[arg(value_name = "HOST:PORT")]
        entry: String,
    },
    /// Add or delete a crossfeed target; kept across restarts.
    Crossfeed {
        /// add or delete.
        action: Action,
        /// The target.
        #[arg(value_name = "HOST:PORT")]
        entry: String,
    },
    /// The server list's self-registrations: `add TOKEN` approves a pending one
    /// without proof, `delete IP:PORT` removes one (`show registrations` lists them).
    Registration {
        /// add (approve) or delete (remove).
        action: Action,
        /// The token (add) or the server (delete).
        #[arg(value_name = "TOKEN|IP:PORT")]
        entry: String,
    },
    /// Ban (add) or unban (delete) a network on the master and the server list: its
    /// servers and registrations leave; kept across restarts.
    Ban {
        /// add or delete.
        action: Action,
        /// IP or CIDR.
        #[arg(value_name = "IP[/LEN]")]
        entry: String,
    },
    /// Print a `NAME TOKEN` line with a new random token, for `[admin] tokens_file`.
    NewToken {
        /// The admin's name (in logs and change records).
        name: String,
    },
}

/// fgms's `show` topics.
#[derive(ValueEnum, Debug, Clone, Copy)]
enum Topic {
    Stats,
    Settings,
    Version,
    Uptime,
    Whitelist,
    Blacklist,
    Crossfeeds,
    Relays,
    Tracker,
    Users,
    Registrations,
    Bans,
}

/// A change.
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
enum Action {
    Add,
    Delete,
}

/// The largest answer read (the pilots' list of a busy relay fits many times).
const MAX_ANSWER: usize = 64 << 20;

/// How a request ended.
enum Answer {
    Ok(Value),
    Refused(StatusCode, String),
}

/// Why no answer came.
struct NoAnswer(String);

fn token(args: &AdminArgs) -> Result<String> {
    let text = match &args.token_file {
        Some(f) => std::fs::read_to_string(f)
            .with_context(|| format!("cannot read token file {}", f.display()))?,
        None => std::env::var("LOBBY_ADMIN_TOKEN")
            .map_err(|_| anyhow::anyhow!("no token: set LOBBY_ADMIN_TOKEN or use --token-file"))?,
    };
    let line = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('#'))
        .context("the token file is empty")?;
    let fields: Vec<&str> = line.split_whitespace().collect();
    match fields[..] {
        [t] | [_, t] => Ok(t.to_string()),
        _ => bail!("the token file's first line is neither TOKEN nor NAME TOKEN"),
    }
}

/// Percent-encodes a path segment's bytes other than unreserved ones and `/`.
fn encode_path(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Sends one request to `url` + `path`; the JSON answer or why there is none. A
/// redirect is not followed: it is an answer like any other that is not a success.
async fn request(
    url: &str,
    method: Method,
    path: &str,
    token: &str,
    body: Option<Value>,
    timeout: Duration,
) -> Result<Result<Answer, NoAnswer>> {
    let mut target = match httpclient::http_url(url) {
        Ok(u) => u,
        Err(httpclient::Error::Scheme(_)) => bail!(
            "--url {url:?}: only http:// is spoken (put TLS in front of a remote lobby and tunnel to it)"
        ),
        Err(httpclient::Error::NoHost) => bail!("--url {url:?} has no host"),
        Err(e) => return Err(e).with_context(|| format!("--url {url:?} is not a URL")),
    };
    target.set_path(&format!("{}{path}", target.path().trim_end_matches('/')));
    target.set_query(None);
    let mut req = Request::new(method, target)
        .header(header::AUTHORIZATION, &format!("Bearer {token}"))
        .and_then(|r| r.header(header::ACCEPT, "application/json"))
        .context("the token cannot be sent in a header")?;
    if let Some(v) = body {
        req = req
            .header(header::CONTENT_TYPE, "application/json")?
            .body(v.to_string());
    }
    let client = Client::new()
        .timeout(timeout)
        .connect_timeout(timeout)
        .max_body(MAX_ANSWER);
    let exchange = async {
        let resp = client.send(req).await?;
        let status = resp.status();
        Ok::<_, httpclient::Error>((status, resp.bytes().await?))
    };
    let (status, bytes) = match exchange.await {
        Ok(r) => r,
        Err(httpclient::Error::Timeout(_)) => {
            return Ok(Err(NoAnswer(format!(
                "no answer from {url} within {:.1} s",
                timeout.as_secs_f64()
            ))))
        }
        Err(httpclient::Error::Connect { why, .. }) => {
            return Ok(Err(NoAnswer(format!("cannot connect to {url}: {why}"))))
        }
        Err(e @ httpclient::Error::Resolve { .. }) => return Ok(Err(NoAnswer(e.to_string()))),
        Err(e) => return Ok(Err(NoAnswer(format!("{url}: {e}")))),
    };
    let value: Value = serde_json::from_slice(&bytes).unwrap_or_else(
        |_| serde_json::json!({"error": String::from_utf8_lossy(&bytes).trim().to_string()}),
    );
    Ok(Ok(if status.is_success() {
        Answer::Ok(value)
    } else {
        let why = value["error"].as_str().unwrap_or("").to_string();
        Answer::Refused(status, why)
    }))
}

/// Runs `lobby admin`.
pub async fn run(args: AdminArgs) -> Result<ExitCode> {
    if let AdminCommand::NewToken { name } = &args.command {
        if name.is_empty()
            || name.len() > 64
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "._@-".contains(c))
        {
            bail!("the name must be 1-64 letters, digits or ._@-");
        }
        let mut raw = [0u8; 32];
        rand::Rng::fill(&mut rand::rngs::OsRng, &mut raw);
        let t = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(raw);
        println!("{name} {t}");
        return Ok(ExitCode::SUCCESS);
    }
    if !(args.timeout.is_finite() && args.timeout > 0.0) {
        bail!("--timeout must be a positive number of seconds");
    }
    let url = args
        .url
        .clone()
        .or_else(|| std::env::var("LOBBY_ADMIN_URL").ok())
        .unwrap_or_else(|| "http://127.0.0.1:8080".into());
    let token = token(&args)?;
    let (method, path, body) = match &args.command {
        AdminCommand::Show { topic } => (
            Method::GET,
            format!("/api/admin/{}", topic_name(*topic)),
            None,
        ),
        AdminCommand::Blacklist { action, entry } => change("blacklist", *action, entry),
        AdminCommand::Relay { action, entry } => change("relays", *action, entry),
        AdminCommand::Crossfeed { action, entry } => change("crossfeeds", *action, entry),
        AdminCommand::Registration { action, entry } => change("registrations", *action, entry),
        AdminCommand::Ban { action, entry } => change("bans", *action, entry),
        AdminCommand::NewToken { .. } => unreachable!("handled above"),
    };
    let timeout = Duration::from_secs_f64(args.timeout);
    let answer = match request(&url, method, &path, &token, body, timeout).await? {
        Ok(a) => a,
        Err(NoAnswer(why)) => {
            eprintln!("lobby admin: {why}");
            return Ok(ExitCode::from(3));
        }
    };
    let value = match answer {
        Answer::Ok(v) => v,
        Answer::Refused(code, why) => {
            if args.json {
                println!(
                    "{}",
                    serde_json::json!({"status": code.as_u16(), "error": why})
                );
            }
            eprintln!(
                "lobby admin: {} {}: {why}",
                code.as_u16(),
                code.canonical_reason().unwrap_or("")
            );
            let auth = code == StatusCode::UNAUTHORIZED || code == StatusCode::FORBIDDEN;
            return Ok(ExitCode::from(if auth { 4 } else { 1 }));
        }
    };
    if args.json {
        println!("{value}");
    } else {
        print!("{}", render(&args.command, &value));
    }
    Ok(ExitCode::SUCCESS)
}

fn change(list: &str, action: Action, entry: &str) -> (Method, String, Option<Value>) {
    match action {
        Action::Add => (
            Method::POST,
            format!("/api/admin/{list}"),
            Some(serde_json::json!({ "entry": entry })),
        ),
        Action::Delete => (
            Method::DELETE,
            format!("/api/admin/{list}/{}", encode_path(entry)),
            None,
        ),
    }
}

fn topic_name(t: Topic) -> &'static str {
    match t {
        Topic::Stats => "stats",
        Topic::Settings => "settings",
        Topic::Version => "version",
        Topic::Uptime => "uptime",
        Topic::Whitelist => "whitelist",
        Topic::Blacklist => "blacklist",
        Topic::Crossfeeds => "crossfeeds",
        Topic::Relays => "relays",
        Topic::Tracker => "tracker",
        Topic::Users => "users",
        Topic::Registrations => "registrations",
        Topic::Bans => "bans",
    }
}

/// The answer as text for a person.
fn render(cmd: &AdminCommand, v: &Value) -> String {
    let typed = |f: &dyn Fn() -> Option<String>| f().unwrap_or_else(|| format!("{v:#}\n"));
    match cmd {
        AdminCommand::Show { topic } => match topic {
            Topic::Stats => {
                let mut out = String::new();
                for (part, counters) in v.as_object().into_iter().flatten() {
                    for (k, n) in counters.as_object().into_iter().flatten() {
                        out.push_str(&format!("{part}.{k} {n}\n"));
                    }
                }
                out
            }
            Topic::Settings | Topic::Registrations | Topic::Bans => format!("{v:#}\n"),
            Topic::Version => typed(&|| {
                let b: VersionBody = serde_json::from_value(v.clone()).ok()?;
                Some(format!(
                    "lobby {} (FlightGear multiplayer protocol {}, tracker protocol {})\n",
                    b.version, b.fgmp_protocol, b.tracker_protocol
                ))
            }),
            Topic::Uptime => typed(&|| {
                let b: UptimeBody = serde_json::from_value(v.clone()).ok()?;
                let s = b.uptime_s;
                Some(format!(
                    "up {}d {:02}:{:02}:{:02} since {} (Unix seconds); {} reload(s)\n",
                    s / 86400,
                    s / 3600 % 24,
                    s / 60 % 60,
                    s % 60,
                    b.started,
                    b.reloads
                ))
            }),
            Topic::Whitelist | Topic::Blacklist | Topic::Crossfeeds | Topic::Relays => {
                typed(&|| {
                    let b: ListBody = serde_json::from_value(v.clone()).ok()?;
                    let mut out = format!("# {}: {} in force\n", b.list, b.entries.len());
                    for e in &b.entries {
                        out.push_str(&e.entry);
                        match (&e.by, e.at) {
                            (Some(by), Some(at)) => {
                                out.push_str(&format!("  added by {by} at {at}"))
                            }
                            _ => out.push_str(&format!("  {}", e.source)),
                        }
                        if let Some(l) = &e.link {
                            out.push_str(&format!(
                                "  address {}  out {} dgrams  in {} dgrams",
                                l.address.as_deref().unwrap_or("unresolved"),
                                l.datagrams_out,
                                l.datagrams_in
                            ));
                        }
                        out.push('\n');
                    }
                    for d in &b.deleted {
                        out.push_str(&format!(
                            "# deleted: {}  by {} at {}\n",
                            d.entry, d.by, d.at
                        ));
                    }
                    Some(out)
                })
            }
            Topic::Tracker => typed(&|| {
                let b: TrackerBody = serde_json::from_value(v.clone()).ok()?;
                Some(match &b.server {
                    None => "not tracked (no [relay] tracker)\n".to_string(),
                    Some(s) => format!(
                        "tracker {s}: {}; queued {}, acked {}, backlog {}, dropped {}, reconnects {}\n",
                        if b.connected { "connected" } else { "not connected" },
                        b.queued, b.acked, b.backlog, b.dropped, b.reconnects
                    ),
                })
            }),
            Topic::Users => typed(&|| {
                let b: UsersBody = serde_json::from_value(v.clone()).ok()?;
                let mut out = format!("# {} pilot(s) online\n", b.online);
                for u in &b.users {
                    let p = &u.pilot;
                    out.push_str(&format!(
                        "{}@{}: {} {} {} {} {} range {} nm, online since {}\n",
                        p.callsign,
                        p.relay.as_deref().unwrap_or("LOCAL"),
                        u.address,
                        p.lat,
                        p.lon,
                        p.alt_ft,
                        p.model,
                        u.range_nm,
                        p.online_since
                    ));
                }
                Some(out)
            }),
        },
        _ => typed(&|| {
            let b: ChangeBody = serde_json::from_value(v.clone()).ok()?;
            let did = match (b.action.as_str(), b.changed) {
                ("add", true) => "added",
                ("delete", true) => "deleted",
                _ => "recorded (the list already was so)",
            };
            Some(format!(
                "{}: {} {did}; in force: {}\n",
                b.list,
                b.entry,
                if b.in_force.is_empty() {
                    "(none)".to_string()
                } else {
                    b.in_force.join(", ")
                }
            ))
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_are_escaped_in_paths_but_cidr_slashes_stay() {
        assert_eq!(encode_path("10.0.0.0/8"), "10.0.0.0/8");
        assert_eq!(
            encode_path("[2001:db8::1]:5000"),
            "%5B2001%3Adb8%3A%3A1%5D%3A5000"
        );
        assert_eq!(encode_path("a b?#"), "a%20b%3F%23");
    }
}
