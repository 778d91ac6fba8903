#!/usr/bin/env python3
"""Regenerates the expected outputs in this directory by running FWGS/server-list's
own scripts/probe.py on each case's sources, against `lobby sim` servers on loopback.

Not run by the tests (nothing in the repository needs probe.py): run by hand after
changing a case, with

    generate.py --lobby target/debug/lobby --probe-py PATH/scripts/probe.py \
                --query PATH/xash3d-query

Each case is a directory with `servers/*.toml` (and, for `export`, a `state.json`
written here) whose addresses are placeholders: `@X<n>@` a Xash3D server (protocol
49), `@G<n>@` a GoldSrc one (`lobby sim --protocol 48`), `@D<n>@` an address nothing
answers on (a UDP port bound and closed). The placeholders are replaced by real
addresses, probe.py runs, and its tree is copied to `<case>/expected/` with the real
addresses turned back into placeholders; the tests do the reverse with their own
servers.
"""

import argparse
import json
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
CASES = ["bad-entries", "no-port", "export"]
# probe.py's flags per case: the export case keeps 10 years of grace so that its
# 2026-11-01 answers stay within it (and 2001-01-01 stays out) whenever the tests run.
FLAGS = {"export": ["--grace-hours", "87600"]}


def sim(lobby, count, extra):
    p = subprocess.Popen(
        [lobby, "sim", "--listen-ip", "127.0.0.1", "--count", str(count), *extra],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    addrs = []
    while len(addrs) < count:
        line = p.stdout.readline()
        if not line:
            sys.exit("lobby sim ended early")
        m = re.match(r"listening sim udp (\S+)", line)
        if m:
            addrs.append(m.group(1))
    return p, addrs


def dead():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.1", 0))
    a = "%s:%d" % s.getsockname()
    s.close()
    return a


def export_state(now):
    """probe.py's state.json for the export case: times fixed, samples within the
    last week of `now` (the tests shift them by whole weeks)."""
    seen = "2026-11-01T12:00:00+00:00"
    samples = [[now - h * 3600, n] for h, n in
               [(1, 3), (2, 4), (25, 7), (26, 2), (49, 5), (73, 0), (97, 12), (121, 1), (145, 9)]]
    return {
        "samples": {"valve": samples, "cstrike": [[now - 3600, 2], [now - 90000, 3]]},
        "valve": {
            "@D0@": {"last_attempt": seen, "last_ping_ms": 0.203, "last_seen": seen},
            "@D1@": {"last_attempt": seen, "last_ping_ms": 12.5, "last_seen": seen},
            "@D2@": {"last_attempt": seen, "last_seen": "2001-01-01T00:00:00+00:00"},
            "@D4@": {"last_attempt": seen},
        },
        "cstrike": {"@D5@": {"last_attempt": seen, "last_ping_ms": 1.0, "last_seen": seen}},
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lobby", required=True)
    ap.add_argument("--probe-py", required=True)
    ap.add_argument("--query", required=True)
    a = ap.parse_args()
    xash, xs = sim(a.lobby, 3, [])
    gold, gs = sim(a.lobby, 2, ["--protocol", "48"])
    try:
        real = {f"@X{i}@": x for i, x in enumerate(xs)}
        real.update({f"@G{i}@": g for i, g in enumerate(gs)})
        real.update({f"@D{i}@": dead() for i in range(6)})
        now = int(time.time())
        (HERE / "export" / "state.json").write_text(
            json.dumps(export_state(now), indent=2, sort_keys=True))
        (HERE / "export" / "generated-at").write_text(f"{now}\n")
        for case in CASES:
            run(a, case, real)
    finally:
        xash.terminate()
        gold.terminate()


def subst(text, pairs):
    for k, v in sorted(pairs, key=lambda p: -len(p[0])):
        text = text.replace(k, v)
    return text


def run(a, case, real):
    src = HERE / case
    with tempfile.TemporaryDirectory() as t:
        t = Path(t)
        (t / "servers").mkdir()
        for f in sorted((src / "servers").glob("*.toml")):
            (t / "servers" / f.name).write_text(subst(f.read_text(), real.items()))
        out = t / "output"
        out.mkdir()
        if (src / "state.json").exists():
            (out / "state.json").write_text(subst((src / "state.json").read_text(), real.items()))
        r = subprocess.run(
            [sys.executable, a.probe_py, "--query", a.query, "--sources", str(t / "servers"),
             "--output", str(out), "--timeout", "2", *FLAGS.get(case, [])],
            capture_output=True, text=True)
        back = [(v, k) for k, v in real.items()]
        exp = src / "expected"
        shutil.rmtree(exp, ignore_errors=True)
        for f in sorted(out.rglob("*")):
            if f.is_file():
                dst = exp / f.relative_to(out)
                dst.parent.mkdir(parents=True, exist_ok=True)
                dst.write_text(subst(f.read_text(), back))
        exp.mkdir(parents=True, exist_ok=True)
        (exp / "probe.log").write_text(subst(r.stdout + r.stderr, back))
        (exp / "exit-status").write_text(f"{r.returncode}\n")
        print(f"{case}: probe.py exit {r.returncode}")


if __name__ == "__main__":
    main()
