//! Stateless challenges: a keyed BLAKE2b of the peer and the time window, so the
//! master holds no per-heartbeat state and a spoofed source cannot register.

use std::net::{IpAddr, SocketAddr};
use std::time::{Duration, Instant};

/// Computes and checks challenges with a per-process secret.
#[derive(Debug, Clone)]
pub struct Challenges {
    secret: [u8; 32],
    epoch: Instant,
    window: Duration,
}

fn ip_bytes(ip: IpAddr, out: &mut Vec<u8>) {
    match ip {
        IpAddr::V4(v4) => out.extend_from_slice(&v4.octets()),
        IpAddr::V6(v6) => out.extend_from_slice(&v6.octets()),
    }
}

impl Challenges {
    /// `secret` must be random per process; `epoch` is the engine's start.
    pub fn new(secret: [u8; 32], epoch: Instant, window: Duration) -> Challenges {
        Challenges {
            secret,
            epoch,
            window: window.max(Duration::from_secs(1)),
        }
    }

    /// Changes the window length (reload).
    pub fn set_window(&mut self, window: Duration) {
        self.window = window.max(Duration::from_secs(1));
    }

    fn window_at(&self, now: Instant) -> u64 {
        (now.saturating_duration_since(self.epoch).as_millis() / self.window.as_millis().max(1))
            as u64
    }

    fn hash(&self, tag: &[u8], ip: IpAddr, port: Option<u16>, window: u64, len: usize) -> Vec<u8> {
        let mut data = Vec::with_capacity(40);
        data.extend_from_slice(tag);
        ip_bytes(ip, &mut data);
        if let Some(p) = port {
            data.extend_from_slice(&p.to_le_bytes());
        }
        data.extend_from_slice(&window.to_le_bytes());
        blake2b_simd::Params::new()
            .hash_length(len)
            .key(&self.secret)
            .hash(&data)
            .as_bytes()
            .to_vec()
    }

    fn word(&self, tag: &[u8], ip: IpAddr, port: Option<u16>, window: u64) -> u32 {
        let h = self.hash(tag, ip, port, window, 4);
        u32::from_le_bytes([h[0], h[1], h[2], h[3]])
    }

    /// The server challenge for `peer` now (the same for repeated heartbeats in a window).
    pub fn server(&self, peer: SocketAddr, now: Instant) -> u32 {
        self.word(b"srv", peer.ip(), Some(peer.port()), self.window_at(now))
    }

    /// Whether `value` is `peer`'s challenge in the current or previous window.
    pub fn check_server(&self, peer: SocketAddr, value: u32, now: Instant) -> bool {
        let w = self.window_at(now);
        self.word(b"srv", peer.ip(), Some(peer.port()), w) == value
            || (w > 0 && self.word(b"srv", peer.ip(), Some(peer.port()), w - 1) == value)
    }

    /// The admin challenge pair (master challenge, hash challenge) for `ip` now.
    pub fn admin(&self, ip: IpAddr, now: Instant) -> (u32, u32) {
        let w = self.window_at(now);
        (
            self.word(b"adm", ip, None, w),
            self.word(b"adh", ip, None, w),
        )
    }

    /// The hash challenge matching `master_challenge` for `ip` in the current or
    /// previous window, if it is one of ours.
    pub fn check_admin(&self, ip: IpAddr, master_challenge: u32, now: Instant) -> Option<u32> {
        let w = self.window_at(now);
        let mut ws = vec![w];
        if w > 0 {
            ws.push(w - 1);
        }
        ws.into_iter()
            .find(|&w| self.word(b"adm", ip, None, w) == master_challenge)
            .map(|w| self.word(b"adh", ip, None, w))
    }
}

/// The admin hash xash3d-admin sends: BLAKE2b(len, key, personal)(password ‖ hash challenge LE).
pub fn admin_hash(
    password: &str,
    hash_challenge: u32,
    len: usize,
    key: &str,
    personal: &str,
) -> Vec<u8> {
    let mut st = blake2b_simd::Params::new()
        .hash_length(len.clamp(1, 64))
        .key(key.as_bytes())
        .personal(personal.as_bytes())
        .to_state();
    st.update(password.as_bytes());
    st.update(&hash_challenge.to_le_bytes());
    st.finalize().as_bytes().to_vec()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bound_to_ip_port_and_window() {
        let t0 = Instant::now();
        let c = Challenges::new([7; 32], t0, Duration::from_secs(60));
        let a: SocketAddr = "192.0.2.1:27015".parse().unwrap();
        let b: SocketAddr = "192.0.2.1:27016".parse().unwrap();
        let v = c.server(a, t0);
        assert_eq!(
            v,
            c.server(a, t0 + Duration::from_secs(30)),
            "same for repeated heartbeats"
        );
        assert!(
            c.check_server(a, v, t0 + Duration::from_secs(100)),
            "previous window accepted"
        );
        assert!(
            !c.check_server(a, v, t0 + Duration::from_secs(125)),
            "two windows later: expired"
        );
        assert!(!c.check_server(b, v, t0), "another port");
        let other = Challenges::new([8; 32], t0, Duration::from_secs(60));
        assert_ne!(other.server(a, t0), v, "secret matters");
    }

    #[test]
    fn admin_pairs() {
        let t0 = Instant::now();
        let c = Challenges::new([1; 32], t0, Duration::from_secs(60));
        let ip: IpAddr = "192.0.2.9".parse().unwrap();
        let (m, h) = c.admin(ip, t0);
        assert_eq!(c.check_admin(ip, m, t0 + Duration::from_secs(61)), Some(h));
        assert_eq!(c.check_admin(ip, m ^ 1, t0), None);
        let x = admin_hash("crowbar", h, 64, "Half-Life", "Freeman");
        assert_eq!(x.len(), 64);
        assert_eq!(x, admin_hash("crowbar", h, 64, "Half-Life", "Freeman"));
        assert_ne!(x, admin_hash("crowbaR", h, 64, "Half-Life", "Freeman"));
    }
}
