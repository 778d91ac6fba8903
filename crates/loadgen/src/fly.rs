//! `lobby fly`: one simulated FlightGear pilot. It sends real position datagrams
//! (v2, as FlightGear 2020.3 does) to a relay, flying a great circle at a constant
//! speed and altitude, until it is stopped (or `--duration` runs out), and drains
//! what the relay sends back. For tests, demos and checking a relay by hand.

use anyhow::{bail, Context, Result};
use fgmp::attitude::{self, Attitude};
use fgmp::geo::{destination, initial_course, to_ecef, Geodetic};
use fgmp::message::{to_bytes, Message, Position};
use fgmp::props::{PropertyList, Protocol};
use fgmp::Callsign;
use std::time::{Duration, Instant};

/// Fly one simulated FlightGear pilot to a relay (real position datagrams, a great
/// circle at constant speed and altitude) until stopped.
#[derive(clap::Args, Debug)]
pub struct FlyArgs {
    /// The relay, HOST:PORT (port 5000 when left out).
    #[arg(long)]
    pub relay: String,
    /// Callsign (at most 7 characters, as FlightGear allows).
    #[arg(long)]
    pub callsign: String,
    /// Start latitude, degrees north.
    #[arg(long, allow_hyphen_values = true)]
    pub lat: f64,
    /// Start longitude, degrees east.
    #[arg(long, allow_hyphen_values = true)]
    pub lon: f64,
    /// Altitude, feet above the WGS84 ellipsoid.
    #[arg(long, default_value_t = 3000.0, allow_hyphen_values = true)]
    pub alt_ft: f64,
    /// Initial true heading, degrees.
    #[arg(long, default_value_t = 0.0)]
    pub heading: f64,
    /// Ground speed, knots (0 hovers).
    #[arg(long, default_value_t = 100.0)]
    pub speed_kt: f64,
    /// Model path.
    #[arg(long, default_value = "Aircraft/c172p/Models/c172p.xml")]
    pub model: String,
    /// Datagrams per second (FlightGear's default is 10).
    #[arg(long, default_value_t = 10.0)]
    pub hz: f64,
    /// Radar range asked of the relay, nautical miles.
    #[arg(long, default_value_t = 100)]
    pub range_nm: u16,
    /// Stop after this many seconds (default: until interrupted).
    #[arg(long)]
    pub duration: Option<f64>,
    /// A chat line to say (property 10002): sent in every datagram for the first
    /// 10 s, as FlightGear does, then the empty string.
    #[arg(long)]
    pub chat: Option<String>,
    /// Radio transmit frequency, MHz (property 13001, e.g. 118.5).
    #[arg(long)]
    pub freq: Option<f64>,
    /// Turn at this rate, degrees per second (positive to the right; 3 is a
    /// standard-rate turn): the aircraft flies circles, and says so in its yaw rate.
    #[arg(long, default_value_t = 0.0, allow_hyphen_values = true)]
    pub turn: f64,
    /// Write where the aircraft was at each datagram sent to FILE, one line each:
    /// Unix time (s), latitude, longitude (degrees), altitude (m) (for comparing a
    /// real client's view with the truth).
    #[arg(long, value_name = "FILE")]
    pub truth: Option<std::path::PathBuf>,
}

/// How long FlightGear repeats a chat line in its datagrams.
pub const CHAT_SECS: f64 = 10.0;

/// The properties `lobby fly` sends at flight time `t`: the protocol version (2),
/// the chat line while it is fresh (then the empty string, as FlightGear), and the
/// transmit frequency in Hz.
pub fn radio_props(chat: Option<&str>, freq_hz: Option<i32>, t: f64) -> Result<PropertyList> {
    let mut l = PropertyList::new();
    l.push_int(fgmp::props::PROTOCOL_VERSION_ID, 2, Protocol::V2)?;
    if let Some(c) = chat {
        let now = if t < CHAT_SECS { c.as_bytes() } else { b"" };
        l.push_string(fgmp::props::CHAT_ID, now, Protocol::V2)?;
    }
    if let Some(hz) = freq_hz {
        l.push_int(fgmp::extras::FREQUENCY_ID, hz, Protocol::V2)?;
    }
    Ok(l)
}

/// `--freq` in MHz as the Hz FlightGear sends; within 0-1000 MHz.
pub fn freq_hz(mhz: f64) -> Result<i32> {
    if !(mhz > 0.0 && mhz < 1000.0) {
        bail!("--freq must be within (0, 1000) MHz, got {mhz}");
    }
    Ok((mhz * 1e6).round() as i32)
}

/// Where the simulated aircraft is.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Flight {
    /// Latitude, degrees.
    pub lat: f64,
    /// Longitude, degrees.
    pub lon: f64,
    /// Altitude, metres.
    pub alt_m: f64,
    /// True heading, degrees.
    pub heading: f64,
    /// Ground speed, m/s.
    pub speed_mps: f64,
    /// Turn rate, degrees per second (positive to the right).
    pub turn_dps: f64,
}

impl Flight {
    /// The flight `dt` later along its great circle (the heading turns with it).
    pub fn advance(self, dt: Duration) -> Flight {
        let nm = self.speed_mps * dt.as_secs_f64() / fgmp::METRES_PER_NM;
        if nm <= 0.0 {
            return self;
        }
        let (lat, lon) = destination(self.lat, self.lon, self.heading, nm);
        // The course on arrival: the reverse of the course back, turned around.
        let back = initial_course(lat, lon, self.lat, self.lon);
        let turned = self.turn_dps * dt.as_secs_f64();
        Flight {
            lat,
            lon,
            heading: (back + 180.0 + turned).rem_euclid(360.0),
            ..self
        }
    }

    /// The position body FlightGear would send for it at flight time `t`.
    pub fn position(&self, model: &str, t: f64) -> Position {
        let ecef = to_ecef(Geodetic {
            lat_deg: self.lat,
            lon_deg: self.lon,
            alt_m: self.alt_m,
        });
        let mut p = Position::at(model, ecef);
        p.time = t;
        p.orientation = attitude::orientation(
            ecef,
            Attitude {
                heading_deg: self.heading,
                pitch_deg: 0.0,
                roll_deg: 0.0,
            },
        );
        p.linear_vel = [self.speed_mps as f32, 0.0, 0.0];
        // Body rates: a level turn is a yaw rate (r, about the body z axis, down).
        p.angular_vel = [0.0, 0.0, self.turn_dps.to_radians() as f32];
        p
    }
}

/// Runs `lobby fly`.
pub async fn run(a: FlyArgs) -> Result<()> {
    let callsign = Callsign::new(&a.callsign)
        .map_err(|e| anyhow::anyhow!("--callsign {:?}: {e}", a.callsign))?;
    if !(-90.0..=90.0).contains(&a.lat) || !(-180.0..=180.0).contains(&a.lon) {
        bail!("--lat must be within -90..90 and --lon within -180..180");
    }
    if !(a.hz > 0.0 && a.hz <= 100.0) {
        bail!("--hz must be within (0, 100], got {}", a.hz);
    }
    let sane = (0.0..100_000.0).contains(&a.speed_kt)
        && a.alt_ft.is_finite()
        && a.heading.is_finite()
        && (-360.0..=360.0).contains(&a.turn);
    if !sane {
        bail!("--speed-kt, --alt-ft, --heading and --turn must be finite (speed 0..100000, turn -360..360)");
    }
    if a.chat
        .as_ref()
        .is_some_and(|c| c.len() > fgmp::props::MAX_SEND_TEXT)
    {
        bail!("--chat: at most {} bytes", fgmp::props::MAX_SEND_TEXT);
    }
    let freq = a.freq.map(freq_hz).transpose()?;
    let relay =
        udp::addr::resolve(&a.relay, 5000).with_context(|| format!("--relay {}", a.relay))?;
    let bind: std::net::SocketAddr = if relay.is_ipv6() {
        "[::]:0".parse()?
    } else {
        "0.0.0.0:0".parse()?
    };
    let sock = tokio::net::UdpSocket::bind(bind)
        .await
        .context("binding the client socket")?;
    let mut f = Flight {
        lat: a.lat,
        lon: a.lon,
        alt_m: a.alt_ft / fgmp::geo::FEET_PER_METRE,
        heading: a.heading.rem_euclid(360.0),
        speed_mps: a.speed_kt * fgmp::METRES_PER_NM / 3600.0,
        turn_dps: a.turn,
    };
    let mut truth = match &a.truth {
        Some(p) => Some(std::io::BufWriter::new(
            std::fs::File::create(p).with_context(|| format!("--truth {}", p.display()))?,
        )),
        None => None,
    };
    println!(
        "flying {} from {:.5},{:.5} heading {:.0} at {:.0} kt, {:.0} ft, to {relay} ({} Hz)",
        a.callsign, a.lat, a.lon, f.heading, a.speed_kt, a.alt_ft, a.hz
    );
    let period = Duration::from_secs_f64(1.0 / a.hz);
    let start = Instant::now();
    let mut tick = tokio::time::interval(period);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut last = start;
    let mut buf = vec![0u8; 2048];
    loop {
        tokio::select! {
            _ = tick.tick() => {}
            _ = tokio::signal::ctrl_c() => return Ok(()),
        }
        let now = Instant::now();
        if a.duration
            .is_some_and(|d| now.duration_since(start).as_secs_f64() >= d)
        {
            return Ok(());
        }
        f = f.advance(now.duration_since(last));
        last = now;
        let t = now.duration_since(start).as_secs_f64();
        let mut body = f.position(&a.model, t);
        body.properties = radio_props(a.chat.as_deref(), freq, t)?;
        let m = Message::position(callsign, a.range_nm, body);
        let bytes = to_bytes(&m).map_err(|e| anyhow::anyhow!("encoding: {e}"))?;
        if let Err(e) = sock.send_to(&bytes, relay).await {
            tracing::warn!(%relay, error = %e, "send failed");
        }
        if let Some(w) = &mut truth {
            use std::io::Write;
            let unix = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0.0, |d| d.as_secs_f64());
            writeln!(w, "{unix:.4} {:.8} {:.8} {:.2}", f.lat, f.lon, f.alt_m)?;
            w.flush()?;
        }
        // Others' traffic (and ICMP errors) arrive here: drain and ignore.
        while sock.try_recv_from(&mut buf).is_ok() {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flight_moves_at_its_speed_and_the_datagram_says_so() {
        let f = Flight {
            lat: 63.985,
            lon: -22.605,
            alt_m: 914.4,
            heading: 280.0,
            speed_mps: 100.0 * 1852.0 / 3600.0,
            turn_dps: 0.0,
        };
        let g = f.advance(Duration::from_secs(36)); // 1 nm at 100 kt
        let p = f.position("m", 0.0);
        let q = g.position("m", 36.0);
        let d = fgmp::geo::chord_nm(p.position, q.position);
        assert!((d - 1.0).abs() < 0.01, "{d}");
        // What a reader of the datagram computes: the heading and speed flown.
        let a = attitude::attitude(q.position, q.orientation);
        assert!((a.heading_deg - g.heading).abs() < 1e-3);
        assert!(a.pitch_deg.abs() < 1e-3 && a.roll_deg.abs() < 1e-3);
        let kt = attitude::ground_speed_kt(q.position, q.orientation, q.linear_vel);
        assert!((kt - 100.0).abs() < 0.01, "{kt}");
        let back = fgmp::geo::from_ecef(q.position);
        assert!((back.lat_deg - g.lat).abs() < 1e-9 && (back.alt_m - 914.4).abs() < 1e-3);
        // Hovering stays put.
        let h = Flight {
            speed_mps: 0.0,
            ..f
        };
        assert_eq!(h.advance(Duration::from_secs(10)), h);
    }

    #[test]
    fn a_turning_flight_flies_a_circle_of_radius_speed_over_rate() {
        let start = Flight {
            lat: 63.985,
            lon: -22.605,
            alt_m: 914.4,
            heading: 0.0,
            speed_mps: 61.7, // 120 kt
            turn_dps: 3.0,
        };
        let mut f = start;
        let (mut far, step) = (0.0_f64, Duration::from_millis(100));
        for _ in 0..1200 {
            // 120 s: one whole standard-rate circle
            f = f.advance(step);
            let p = |f: Flight| {
                to_ecef(Geodetic {
                    lat_deg: f.lat,
                    lon_deg: f.lon,
                    alt_m: f.alt_m,
                })
            };
            far = far.max(fgmp::geo::chord_nm(p(start), p(f)) * fgmp::METRES_PER_NM);
        }
        let radius = 61.7 / 3.0_f64.to_radians();
        assert!((far - 2.0 * radius).abs() < 0.01 * radius, "{far} m across");
        let back = fgmp::geo::great_circle_m(start.lat, start.lon, f.lat, f.lon);
        assert!(back < 0.01 * radius, "back where it began: {back} m off");
        assert!((f.heading - 0.0).abs() < 0.5 || (f.heading - 360.0).abs() < 0.5);
        let p = f.position("m", 0.0);
        assert!((p.angular_vel[2] - 3.0_f32.to_radians()).abs() < 1e-6);
    }

    #[test]
    fn chat_for_ten_seconds_then_empty_and_the_frequency_in_hz() {
        let hz = freq_hz(118.5).unwrap();
        assert_eq!(hz, 118_500_000);
        assert!(freq_hz(0.0).is_err() && freq_hz(f64::NAN).is_err());
        let mut p = Flight {
            lat: 64.0,
            lon: -22.6,
            alt_m: 900.0,
            heading: 0.0,
            speed_mps: 0.0,
            turn_dps: 0.0,
        }
        .position("m", 1.0);
        for (t, want) in [(1.0, Some("hi")), (10.5, None)] {
            p.properties = radio_props(Some("hi"), Some(hz), t).unwrap();
            let m = Message::position(Callsign::new("A").unwrap(), 100, p.clone());
            let x = fgmp::extras::Extras::decode(&to_bytes(&m).unwrap()).unwrap();
            assert_eq!(x.chat.as_deref(), want);
            assert_eq!(x.frequency_hz, Some(118_500_000));
            assert_eq!(x.protocol, 2);
        }
    }
}
