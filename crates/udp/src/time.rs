//! The wall clock the kernel stamps datagrams with.

/// `CLOCK_REALTIME` in nanoseconds (the clock `SO_TIMESTAMPNS` uses).
pub fn realtime_ns() -> i64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes into the timespec we pass.
    unsafe { libc::clock_gettime(libc::CLOCK_REALTIME, &mut ts) };
    ts_ns(ts)
}

/// A timespec in nanoseconds.
// time_t and c_long are i64 on 64-bit Linux but not everywhere.
#[allow(clippy::unnecessary_cast)]
pub fn ts_ns(ts: libc::timespec) -> i64 {
    (ts.tv_sec as i64)
        .saturating_mul(1_000_000_000)
        .saturating_add(ts.tv_nsec as i64)
}

/// The current Unix time in whole seconds (0 before 1970: a clock set that far back
/// is a broken clock, not a reason to fail).
pub fn unix_secs() -> i64 {
    since_epoch().as_secs() as i64
}

/// The current Unix time in seconds, with fractions.
pub fn unix_secs_f64() -> f64 {
    since_epoch().as_secs_f64()
}

/// The time since the Unix epoch (zero before it).
pub fn since_epoch() -> std::time::Duration {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
}
