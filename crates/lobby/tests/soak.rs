//! The soak's short variant (issue 30, item 5): `scripts/soak` for 4 minutes with every
//! part running at once (relay, tracker, directory, master with 1,000 curated entries
//! and self-registration), each killed with SIGKILL and started again, on the binary
//! under test. The script checks what it promises (nothing committed lost, every
//! part back, the registrations kept, DNS and the logbook answering outside the
//! restarts) and exits 1 naming what failed; this test runs it and reads its summary.
//! The long runs (2 hours and more, `scripts/soak 120`) are recorded in
//! docs/RELIABILITY.md.

use std::path::Path;
use std::process::Command;

#[test]
fn every_part_at_once_with_sigkill_restarts_loses_nothing() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let out = std::env::temp_dir().join(format!("lobby-soak-ci-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let run = Command::new(root.join("scripts/soak"))
        .args([
            "4",
            "--out",
            out.to_str().unwrap(),
            "--pilots",
            "50",
            "--churn",
            "5",
            "--servers",
            "50",
            "--curated",
            "1000",
            "--restart-every",
            "45",
            "--register-every",
            "15",
            "--sample-every",
            "15",
        ])
        .env("LOBBY", env!("CARGO_BIN_EXE_lobby"))
        .output()
        .expect("scripts/soak runs (python3, dig: scripts/ci-deps installs them)");
    let summary = String::from_utf8_lossy(&run.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(
        run.status.success(),
        "soak failed ({:?}):\n{summary}\n{stderr}",
        run.status
    );
    assert!(summary.contains("checks: all passed"), "{summary}");
    // Every part was killed and came back; the flight logs recorded; registrations
    // were admitted; the plot was written.
    for part in ["master", "relay", "tracker", "dns"] {
        let line = summary
            .lines()
            .find(|l| l.starts_with(&format!("restarts {part}: ")))
            .unwrap_or_else(|| panic!("no restarts line for {part}:\n{summary}"));
        let n: u32 = line
            .split_whitespace()
            .nth(2)
            .and_then(|n| n.parse().ok())
            .unwrap();
        assert!(n >= 1, "{part} never restarted:\n{summary}");
    }
    for db in ["relay", "tracker"] {
        let line = summary
            .lines()
            .find(|l| l.starts_with(&format!("flight log {db}: ")))
            .unwrap();
        assert!(line.ends_with("integrity ok"), "{line}");
    }
    let reg = summary
        .lines()
        .find(|l| l.starts_with("self-registration: "))
        .unwrap();
    assert!(!reg.contains(" 0 of the"), "{reg}");
    let svg = std::fs::read_to_string(out.join("soak.svg")).unwrap();
    assert!(
        svg.starts_with("<svg") && svg.contains("polyline"),
        "the plot"
    );
    let _ = std::fs::remove_dir_all(&out);
}
