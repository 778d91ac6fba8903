//! The relay's hot-path parser: never panics, and agrees with the strict decoder
//! about the header of every datagram it accepts.
/// The fuzz target's body: arbitrary bytes in; panics on a broken invariant.
pub fn run(data: &[u8]) {
    if let Ok(info) = fgmp::RoutingInfo::parse(data) {
        let h = fgmp::Header::decode(data).expect("accepted datagrams have a header");
        assert_eq!(h.callsign, info.callsign);
        assert_eq!(h.msg_id, info.msg_id);
        assert_eq!(h.msg_len as usize, data.len());
        if let Some(p) = info.position {
            assert!(p.iter().all(|v| v.is_finite()));
        }
    }
}
