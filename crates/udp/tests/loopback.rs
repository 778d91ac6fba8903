//! The batch calls against real loopback sockets, IPv4 and IPv6.

use std::net::UdpSocket;
use std::time::{Duration, Instant};
use udp::{enable_timestamps, Destinations, Ready, RecvBatch, SendBatch, Wake};

#[test]
fn batches_round_trip_over_loopback() {
    for (a, b) in [("127.0.0.1:0", "127.0.0.1:0"), ("[::1]:0", "[::1]:0")] {
        let rx = UdpSocket::bind(a).unwrap();
        let tx = UdpSocket::bind(b).unwrap();
        rx.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
        let to = rx.local_addr().unwrap();
        let payloads: Vec<Vec<u8>> = (0..10u8).map(|i| vec![i; 100 + i as usize]).collect();
        let mut sb = SendBatch::new();
        let n = sb.send(&tx, payloads.iter().map(|p| (p.as_slice(), to)));
        assert_eq!((n.sent, n.failed), (10, 0));
        let mut rb = RecvBatch::new(16);
        let mut got = Vec::new();
        while got.len() < 10 {
            rb.recv(&rx, true).unwrap();
            for (d, from) in rb.iter() {
                assert_eq!(from, tx.local_addr().unwrap());
                got.push(d.to_vec());
            }
        }
        assert_eq!(got, payloads);
    }
}

#[test]
fn destinations_fan_out_and_timestamps() -> std::io::Result<()> {
    let rx1 = UdpSocket::bind("127.0.0.1:0")?;
    let rx2 = UdpSocket::bind("127.0.0.1:0")?;
    let tx = UdpSocket::bind("127.0.0.1:0")?;
    let mut list = Destinations::new(&[rx1.local_addr()?, rx2.local_addr()?]);
    assert_eq!(list.send(&tx, b"hello", 0..2, 64).sent, 2);
    assert_eq!(list.send(&tx, b"again", 1..9, 1).sent, 1);
    rx1.set_read_timeout(Some(Duration::from_secs(2)))?;
    let mut b = RecvBatch::with_options(8, true, false);
    assert_eq!(b.recv(&rx1, true)?, 1);
    assert_eq!(b.datagram(0), b"hello");
    assert_eq!(b.addr(0), Some(tx.local_addr()?));
    assert!(b.datagram(5).is_empty());
    std::thread::sleep(Duration::from_millis(50));
    let mut b = RecvBatch::with_options(8, false, true);
    assert_eq!(b.recv(&rx2, false)?, 2);
    assert_eq!(
        (b.datagram(0), b.datagram(1)),
        (&b"hello"[..], &b"again"[..])
    );
    assert_eq!(b.addr(0), None);
    assert!(b.kernel_time(0).is_none(), "timestamps were off");
    enable_timestamps(&rx2)?;
    let before = udp::time::realtime_ns();
    list.send(&tx, b"stamped", 1..2, 1);
    std::thread::sleep(Duration::from_millis(50));
    assert_eq!(b.recv(&rx2, false)?, 1);
    let t = udp::time::ts_ns(b.kernel_time(0).expect("a kernel timestamp"));
    assert!(
        t >= before && t <= udp::time::realtime_ns(),
        "{before} <= {t}"
    );
    assert_eq!(b.datagram(0), b"stamped");
    Ok(())
}

#[test]
fn recv_until_returns_for_a_datagram_a_deadline_or_a_wake() -> std::io::Result<()> {
    let rx = std::sync::Arc::new(UdpSocket::bind("127.0.0.1:0")?);
    let tx = UdpSocket::bind("127.0.0.1:0")?;
    let wake = std::sync::Arc::new(Wake::new());
    wake.watch(rx.clone());
    let mut b = RecvBatch::new(4);
    let t0 = Instant::now();
    let r = b.recv_until(&*rx, Some(t0 + Duration::from_millis(30)), &wake)?;
    assert_eq!(r, Ready::Deadline);
    assert!(t0.elapsed() >= Duration::from_millis(30), "never early");
    tx.send_to(b"x", rx.local_addr()?)?;
    // A far deadline: the datagram ends the wait, not the deadline.
    let far = Some(Instant::now() + Duration::from_secs(30));
    assert_eq!(b.recv_until(&*rx, far, &wake)?, Ready::Datagrams(1));
    assert_eq!(
        b.iter().next().map(|(d, _)| d.to_vec()),
        Some(b"x".to_vec())
    );
    // A thread blocked with no deadline at all is woken by the raise.
    let (w2, rx2) = (wake.clone(), rx.clone());
    let waiter = std::thread::spawn(move || {
        let mut b = RecvBatch::new(1);
        b.recv_until(&*rx2, None, &w2)
    });
    std::thread::sleep(Duration::from_millis(50));
    wake.raise();
    assert_eq!(waiter.join().unwrap()?, Ready::Woken);
    assert_eq!(
        b.recv_until(&*rx, far, &wake)?,
        Ready::Woken,
        "stays raised"
    );
    Ok(())
}
