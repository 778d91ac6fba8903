//! CPU time of a process and its threads from `/proc/PID/stat`.

use anyhow::{bail, Context, Result};
use std::collections::BTreeMap;

/// Clock ticks per second (`sysconf(_SC_CLK_TCK)`), 100 if unknown.
pub(crate) fn clock_ticks() -> f64 {
    // SAFETY: sysconf has no preconditions.
    let t = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if t > 0 {
        t as f64
    } else {
        100.0
    }
}

/// `(comm, utime + stime in ticks)` from the text of a `stat` file.
pub(crate) fn parse_stat(text: &str) -> Option<(String, u64)> {
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    let comm = text.get(open + 1..close)?.to_string();
    // After ")": state(3) ppid(4) ... utime(14) stime(15): indices 11 and 12 here.
    let rest: Vec<&str> = text.get(close + 1..)?.split_whitespace().collect();
    let utime: u64 = rest.get(11)?.parse().ok()?;
    let stime: u64 = rest.get(12)?.parse().ok()?;
    Some((comm, utime + stime))
}

/// CPU seconds (user + system) a process has used so far.
pub(crate) fn process_cpu_s(pid: u32) -> Result<f64> {
    let path = format!("/proc/{pid}/stat");
    let text = std::fs::read_to_string(&path).with_context(|| format!("cannot read {path}"))?;
    match parse_stat(&text) {
        Some((_, ticks)) => Ok(ticks as f64 / clock_ticks()),
        None => bail!("cannot parse {path}"),
    }
}

/// CPU seconds of this process.
pub(crate) fn self_cpu_s() -> Option<f64> {
    process_cpu_s(std::process::id()).ok()
}

/// CPU seconds per thread, keyed by `tid comm`.
pub(crate) fn thread_cpu_s(pid: u32) -> BTreeMap<String, f64> {
    let mut out = BTreeMap::new();
    let Ok(dir) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return out;
    };
    let hz = clock_ticks();
    for e in dir.flatten() {
        let tid = e.file_name().to_string_lossy().into_owned();
        let Ok(text) = std::fs::read_to_string(e.path().join("stat")) else {
            continue;
        };
        if let Some((comm, ticks)) = parse_stat(&text) {
            out.insert(format!("{tid} {comm}"), ticks as f64 / hz);
        }
    }
    out
}

/// Per-thread CPU seconds used between two snapshots (threads present in `after`).
pub(crate) fn thread_delta(
    before: &BTreeMap<String, f64>,
    after: &BTreeMap<String, f64>,
) -> BTreeMap<String, f64> {
    after
        .iter()
        .map(|(k, v)| (k.clone(), v - before.get(k).copied().unwrap_or(0.0)))
        .collect()
}

/// Busy CPU seconds of the whole machine so far (all CPUs: user, nice, system,
/// irq, softirq and steal from the first line of `/proc/stat`).
pub(crate) fn machine_busy_s() -> Option<f64> {
    let text = std::fs::read_to_string("/proc/stat").ok()?;
    parse_machine_busy(text.lines().next()?).map(|t| t as f64 / clock_ticks())
}

/// Busy ticks from the `cpu ` line of `/proc/stat`.
pub(crate) fn parse_machine_busy(line: &str) -> Option<u64> {
    let mut f = line.split_whitespace();
    if f.next()? != "cpu" {
        return None;
    }
    let v: Vec<u64> = f.map(|x| x.parse().ok()).collect::<Option<_>>()?;
    // user nice system idle iowait irq softirq steal [guest guest_nice: already in user/nice]
    let get = |i: usize| v.get(i).copied().unwrap_or(0);
    Some(get(0) + get(1) + get(2) + get(5) + get(6) + get(7))
}

/// CPU seconds the calling thread has used so far.
pub(crate) fn this_thread_cpu_s() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes into the timespec we pass.
    if unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) } != 0 {
        return 0.0;
    }
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

/// Receive-queue drops per local UDP port, summed over `/proc/net/udp` and
/// `/proc/net/udp6` (the kernel's per-socket `drops` column: datagrams that
/// arrived while the socket's receive buffer was full).
pub(crate) fn udp_drops_by_port() -> std::collections::HashMap<u16, u64> {
    let mut out = std::collections::HashMap::new();
    for path in ["/proc/net/udp", "/proc/net/udp6"] {
        let Ok(text) = std::fs::read_to_string(path) else {
            continue;
        };
        for line in text.lines().skip(1) {
            if let Some((port, drops)) = parse_udp_line(line) {
                *out.entry(port).or_insert(0) += drops;
            }
        }
    }
    out
}

/// `(local port, drops)` from one `/proc/net/udp` line.
pub(crate) fn parse_udp_line(line: &str) -> Option<(u16, u64)> {
    let fields: Vec<&str> = line.split_whitespace().collect();
    let local = fields.get(1)?;
    let port = u16::from_str_radix(local.rsplit(':').next()?, 16).ok()?;
    let drops = fields.last()?.parse().ok()?;
    Some((port, drops))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_proc_net_udp_line() {
        let l = "  12: 0100007F:9C41 00000000:0000 07 00000000:00000000 00:00000000 00000000     0        0 123456 2 0000000000000000 17";
        assert_eq!(parse_udp_line(l), Some((0x9c41, 17)));
        assert_eq!(parse_udp_line("  sl  local_address rem_address"), None);
    }

    #[test]
    fn parses_the_machine_cpu_line() {
        assert_eq!(
            parse_machine_busy("cpu  100 5 50 9000 7 1 2 3 0 0"),
            Some(161)
        );
        assert_eq!(parse_machine_busy("cpu0 1 2 3 4"), None);
        assert!(machine_busy_s().is_some());
    }

    #[test]
    fn parses_a_stat_line_with_spaces_in_comm() {
        let line =
            "4242 (relay udp) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 75 0 0 20 0 3 0 123 0 0";
        assert_eq!(parse_stat(line), Some(("relay udp".to_string(), 325)));
        assert_eq!(parse_stat("garbage"), None);
    }

    #[test]
    fn reads_own_process() {
        assert!(self_cpu_s().is_some());
        assert!(!thread_cpu_s(std::process::id()).is_empty());
    }
}
