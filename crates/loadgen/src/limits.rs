//! Process resource limits.

/// Raises the soft open-file limit to the hard limit (every simulated pilot or server
/// has its own socket); returns the soft limit now in force.
pub fn raise_nofile() -> u64 {
    // SAFETY: getrlimit/setrlimit only read and write the struct passed in.
    unsafe {
        let mut r: libc::rlimit = std::mem::zeroed();
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) != 0 {
            return 1024;
        }
        if r.rlim_cur < r.rlim_max {
            let want = libc::rlimit {
                rlim_cur: r.rlim_max,
                rlim_max: r.rlim_max,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &want) == 0 {
                return want.rlim_cur;
            }
        }
        r.rlim_cur
    }
}
