//! The fgms.conf reader (`lobby relay --fgms-config`) on arbitrary text: never
//! panics; whatever it accepts yields a `[relay]` section that the engine
//! configuration either accepts or refuses with an error, never a panic.

/// The fuzz target's body: arbitrary bytes in (read as UTF-8, lossily).
pub fn run(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let mut relay = config::RelaySection::default();
    if config::fgms_conf::apply(&text, "fuzz.conf", &mut relay).is_ok() {
        let _ = relay.engine_config();
        let _ = relay.peer_names();
        let _ = relay.listen_addrs();
        let _ = relay.telnet_options();
    }
}
