//! A fleet of simulated servers with plausible, varied names, maps, players and
//! rules, all derived from one seed: the same [`FleetSpec`] always gives the same
//! servers, so a test can compute what a query tool must show.

use crate::config::{Config, ConfigError, Player, Protocol, MAX_CLIENTS};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::Duration;

/// What to run: how many servers, where, and what they look like. Every field not
/// fixed here is varied per server from `seed`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FleetSpec {
    /// Number of servers.
    pub count: u16,
    /// Seed for everything generated.
    pub seed: u64,
    /// Which engine every server is: 49 (Xash3D FWGS) or 48 (GoldSrc: A2S only,
    /// no heartbeats, `masters` ignored).
    pub protocol: Protocol,
    /// Masters every server registers with (protocol 49 only).
    pub masters: Vec<SocketAddr>,
    /// IP the servers listen on.
    pub listen_ip: IpAddr,
    /// Port of the first server; server `i` uses `base_port + i`. 0 = ephemeral ports.
    pub base_port: u16,
    /// Game directory of every server.
    pub gamedir: String,
    /// NAT mode (60 s heartbeats, `nat\1`, `c` requests answered).
    pub nat: bool,
    /// Answer NAT connects for private and loopback clients (needed on one machine).
    pub nat_allow_private: bool,
    /// Human players per server; `None` = varied (up to half the slots).
    pub players: Option<u8>,
    /// Bots per server.
    pub bots: u8,
    /// Slots per server; `None` = varied (8 to 32).
    pub max_players: Option<u8>,
    /// Server name; with several servers ` #N` (N from 1) is appended. `None` = generated.
    pub hostname: Option<String>,
    /// Map of every server; `None` = varied.
    pub map: Option<String>,
    /// Join password of every server.
    pub password: Option<String>,
    /// Add enough rules that A2S_RULES needs GoldSrc split packets.
    pub big_rules: bool,
    /// Answer the old GoldSrc text queries.
    pub legacy_queries: bool,
    /// Offer and run the bandwidth test.
    pub bandwidth_test: bool,
}

impl Default for FleetSpec {
    /// One valve server on 127.0.0.1 (a test tool answers strangers only when told
    /// to), ephemeral port, no masters, seed 1.
    fn default() -> Self {
        FleetSpec {
            count: 1,
            seed: 1,
            protocol: Protocol::Xash,
            masters: Vec::new(),
            listen_ip: IpAddr::V4(Ipv4Addr::LOCALHOST),
            base_port: 0,
            gamedir: "valve".into(),
            nat: false,
            nat_allow_private: false,
            players: None,
            bots: 0,
            max_players: None,
            hostname: None,
            map: None,
            password: None,
            big_rules: false,
            legacy_queries: false,
            bandwidth_test: true,
        }
    }
}

const ADJECTIVES: &[&str] = &[
    "Black Mesa",
    "Lambda",
    "Xen",
    "Crowbar",
    "Gauss",
    "Tau",
    "Snark",
    "Hornet",
    "Satchel",
    "Headcrab",
    "Vortigaunt",
    "Anomalous",
    "Sector C",
    "Rapid",
    "Old School",
    "Frag",
];
const NOUNS: &[&str] = &[
    "Deathmatch",
    "Arena",
    "Frag Fest",
    "Playground",
    "Bunker",
    "Labs",
    "Outpost",
    "Warzone",
    "Classic DM",
    "Brawl",
    "Stadium",
    "Hideout",
];
const COUNTRIES: &[&str] = &["EU", "US", "RU", "DE", "BR", "AU", "JP", "UK", "FR", "PL"];
const VALVE_MAPS: &[&str] = &[
    "crossfire",
    "datacore",
    "stalkyard",
    "bounce",
    "boot_camp",
    "frenzy",
    "gasworks",
    "lambda_bunker",
    "rapidcore",
    "snark_pit",
    "subtransit",
    "undertow",
];
const CSTRIKE_MAPS: &[&str] = &[
    "de_dust2",
    "de_inferno",
    "de_nuke",
    "de_train",
    "cs_office",
    "cs_italy",
    "de_aztec",
    "cs_assault",
];
const NICKS: &[&str] = &[
    "gordon",
    "barney",
    "shephard",
    "calhoun",
    "kleiner",
    "eli",
    "alyx",
    "gman",
    "zombie",
    "scientist",
    "grunt",
    "otis",
    "rosenberg",
    "magnusson",
    "nihilanth",
    "tentacle",
    "ichthy",
    "bullsquid",
    "houndeye",
    "gargantua",
    "controller",
    "assassin",
    "apache",
    "osprey",
];
const SLOTS: &[u8] = &[8, 10, 12, 16, 16, 20, 24, 32];

/// splitmix64, one stream per server.
struct Rng(u64);

impl Rng {
    fn new(seed: u64, index: u16) -> Rng {
        Rng(seed ^ u64::from(index).wrapping_mul(0xd1b5_4a32_d192_ed03) ^ 0x5eed)
    }
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// Uniform in `0..n` (n > 0).
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    fn pick<'a>(&mut self, from: &[&'a str]) -> &'a str {
        from[self.below(from.len() as u64) as usize]
    }
}

impl FleetSpec {
    /// Where server `index` listens.
    pub fn addr(&self, index: u16) -> SocketAddr {
        let port = if self.base_port == 0 {
            0
        } else {
            self.base_port.saturating_add(index)
        };
        SocketAddr::new(self.listen_ip, port)
    }

    /// Server `index`'s configuration (its `secret` is derived from the seed too).
    pub fn config(&self, index: u16) -> Result<Config, ConfigError> {
        let mut rng = Rng::new(self.seed, index);
        let max_players = match self.max_players {
            Some(m) => m,
            None => SLOTS[rng.below(SLOTS.len() as u64) as usize],
        }
        .clamp(1, MAX_CLIENTS);
        let bots = self.bots.min(max_players);
        let players = match self.players {
            Some(k) => k,
            None => rng.below(u64::from(max_players / 2) + 1) as u8,
        }
        .min(max_players - bots);
        let hostname = match &self.hostname {
            Some(h) if self.count > 1 => format!("{h} #{}", u32::from(index) + 1),
            Some(h) => h.clone(),
            None => format!(
                "[{}] {} {} #{}",
                rng.pick(COUNTRIES),
                rng.pick(ADJECTIVES),
                rng.pick(NOUNS),
                u32::from(index) + 1
            ),
        };
        let (maps, game) = match self.gamedir.as_str() {
            "cstrike" | "czero" => (CSTRIKE_MAPS, "Counter-Strike"),
            _ => (VALVE_MAPS, "Half-Life"),
        };
        let map = match &self.map {
            Some(m) => m.clone(),
            None => rng.pick(maps).to_string(),
        };
        let mut names: Vec<String> = Vec::new();
        let mut person = |rng: &mut Rng, bot: bool| {
            let name = loop {
                let base = rng.pick(NICKS);
                let n = if bot {
                    format!("[BOT] {base}")
                } else {
                    match rng.below(3) {
                        0 => base.to_string(),
                        1 => format!("{base}{}", rng.below(100)),
                        _ => format!("xX_{base}_Xx"),
                    }
                };
                if !names.contains(&n) {
                    break n;
                }
                // Names must be unique on one server: a suffix always ends the loop.
                let n = format!("{n}({})", names.len());
                if !names.contains(&n) {
                    break n;
                }
            };
            names.push(name.clone());
            Player {
                name,
                frags: rng.below(60) as i32 - 2,
                connected_for: Duration::from_secs(30 + rng.below(3600)),
            }
        };
        let humans: Vec<Player> = (0..players).map(|_| person(&mut rng, false)).collect();
        let bot_list: Vec<Player> = (0..bots).map(|_| person(&mut rng, true)).collect();
        let timelimit = [15, 20, 30, 45][rng.below(4) as usize];
        let fraglimit = [0, 25, 50, 100][rng.below(4) as usize];
        let mut rules: Vec<(String, String)> = vec![
            ("coop".into(), "0".into()),
            ("deathmatch".into(), "1".into()),
            ("decalfrequency".into(), "30".into()),
            ("mp_falldamage".into(), rng.below(2).to_string()),
            ("mp_flashlight".into(), "1".into()),
            ("mp_footsteps".into(), "1".into()),
            ("mp_forcerespawn".into(), "1".into()),
            ("mp_fraglimit".into(), fraglimit.to_string()),
            ("mp_friendlyfire".into(), "0".into()),
            ("mp_teamplay".into(), "0".into()),
            ("mp_timelimit".into(), timelimit.to_string()),
            ("mp_weaponstay".into(), rng.below(2).to_string()),
            ("sv_aim".into(), "0".into()),
            ("sv_cheats".into(), "0".into()),
            ("sv_gravity".into(), "800".into()),
            ("sv_maxspeed".into(), "320".into()),
            // FCVAR_PROTECTED: its value is reported as 1/0.
            (
                "sv_password".into(),
                if self.password.is_some() { "1" } else { "0" }.into(),
            ),
        ];
        if self.big_rules {
            // About 3.4 KB: three GoldSrc fragments of at most 1400 bytes.
            for i in 0..48 {
                let v = rng.next();
                rules.push((
                    format!("sim_rule_{i:02}"),
                    format!(
                        "{v:016x}{:016x}{:016x}",
                        v.rotate_left(17),
                        v.rotate_left(41)
                    ),
                ));
            }
        }
        let config = Config {
            protocol: self.protocol,
            hostname,
            map,
            gamedir: self.gamedir.clone(),
            game: game.into(),
            max_players,
            players: humans,
            bots: bot_list,
            password: self.password.clone(),
            nat: self.nat,
            nat_allow_private: self.nat_allow_private,
            masters: self.masters.clone(),
            rules,
            bandwidth_test: self.bandwidth_test,
            legacy_queries: self.legacy_queries,
            secret: rng.next(),
            ..Config::default()
        };
        config.validate()?;
        Ok(config)
    }

    /// Every server's configuration, in order.
    pub fn configs(&self) -> Result<Vec<Config>, ConfigError> {
        (0..self.count).map(|i| self.config(i)).collect()
    }
}
