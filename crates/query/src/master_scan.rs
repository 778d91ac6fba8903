//! Asking Xash3D masters for their server lists, and merging the lists.
//!
//! A master answers a scan with one or more list pages, each echoing the scan's
//! `key`. Pages are filled in order, so a page smaller than an earlier one is the
//! last; a master with a single page is done when no more arrive for a moment.

use crate::client_socket;
use std::collections::HashSet;
use std::net::SocketAddr;
use std::time::Duration;
use tokio::time::Instant;
use xash::info::InfoString;
use xash::master::{ScanRequest, ServerListPage, SERVER_LIST_HEADER};

/// Scans asked of each master before it counts as silent.
const ATTEMPTS: usize = 2;

/// Servers taken from one master at most (real masters list a few thousand): a
/// master that sends pages for ever cannot make the scan hold more.
pub const MAX_SERVERS_PER_MASTER: usize = 1 << 16;

/// After a master's first page, how long a silence means the list is complete.
const QUIET: Duration = Duration::from_millis(300);

/// What a scan asks every master.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScanSpec {
    /// The filter sent (`gamedir`, `clver`, `nat`...); the scan adds `key`.
    pub filter: InfoString,
    /// Echoed in every page, so pages meant for another scan are told apart.
    pub key: u32,
    /// How long to wait for a master's first page, per attempt.
    pub wait: Duration,
}

impl ScanSpec {
    /// A scan with a key of this process's own: two scans running at once on one
    /// machine do not take each other's pages.
    pub fn new(filter: InfoString, wait: Duration) -> ScanSpec {
        ScanSpec {
            filter,
            key: (std::process::id() ^ 0x5eed_1ab5).max(1),
            wait,
        }
    }

    /// The `1` scan request, as current engines send it.
    fn request(&self) -> Result<Vec<u8>, ScanError> {
        let mut filter = self.filter.clone();
        filter.set("key", format!("{:x}", self.key))?;
        let mut req = Vec::new();
        ScanRequest {
            region: 0xff,
            last: None,
            filter,
            final_nul: true,
            malformed_last: false,
        }
        .encode(&mut req);
        Ok(req)
    }
}

/// Why a master could not be scanned (a master that does not answer is not an
/// error: it is `Ok(None)`).
#[derive(Debug, thiserror::Error)]
pub enum ScanError {
    /// The socket failed (no IPv6, for instance).
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// The filter has no room for the key, or holds a forbidden character.
    #[error(transparent)]
    Filter(#[from] xash::Error),
    /// The scan's task panicked.
    #[error(transparent)]
    Task(#[from] tokio::task::JoinError),
}

/// One master's answer: the servers it listed, or `None` if it never answered.
pub type MasterAnswer = Result<Option<Vec<SocketAddr>>, ScanError>;

/// Scans every master at once, each with its own socket and deadline, so a slow
/// master costs its own wait and no more. Answers come back in `masters` order.
pub async fn scan_masters(masters: &[SocketAddr], spec: &ScanSpec) -> Vec<MasterAnswer> {
    let scans: Vec<_> = masters
        .iter()
        .map(|&m| {
            let spec = spec.clone();
            tokio::spawn(async move { scan_master(m, &spec).await })
        })
        .collect();
    let mut answers = Vec::with_capacity(scans.len());
    for scan in scans {
        answers.push(scan.await.unwrap_or_else(|e| Err(e.into())));
    }
    answers
}

/// Scans one master, asking twice if the first request goes unanswered.
pub async fn scan_master(master: SocketAddr, spec: &ScanSpec) -> MasterAnswer {
    let sock = client_socket::bind_any(master.is_ipv6())?;
    let req = spec.request()?;
    let mut pages = ListPages::new(master, spec.key);
    let mut buf = vec![0u8; 65536];
    for _attempt in 0..ATTEMPTS {
        sock.send_to(&req, master).await?;
        let deadline = Instant::now() + spec.wait;
        loop {
            // After the first page, the rest arrive together: stop when quiet.
            let until = if pages.answered {
                (Instant::now() + QUIET).min(deadline)
            } else {
                deadline
            };
            match tokio::time::timeout_at(until, sock.recv_from(&mut buf)).await {
                Ok(Ok((n, from))) => {
                    if pages.take(&buf[..n], from) {
                        return Ok(Some(pages.servers));
                    }
                }
                Ok(Err(e)) => return Err(e.into()),
                Err(_) => break,
            }
        }
        if pages.answered {
            return Ok(Some(pages.servers));
        }
    }
    Ok(None)
}

/// The pages of one master's list as they arrive.
#[derive(Debug)]
struct ListPages {
    master: SocketAddr,
    key: u32,
    servers: Vec<SocketAddr>,
    largest_page: usize,
    /// A page with our key came: the master answered, even if with no servers.
    answered: bool,
}

impl ListPages {
    fn new(master: SocketAddr, key: u32) -> ListPages {
        ListPages {
            master,
            key,
            servers: Vec::new(),
            largest_page: 0,
            answered: false,
        }
    }

    /// Takes one datagram; true when it completed the list. Datagrams from anyone
    /// but the master, and pages with another key, are ignored.
    fn take(&mut self, datagram: &[u8], from: SocketAddr) -> bool {
        let master = self.master;
        if from != master || !datagram.starts_with(SERVER_LIST_HEADER) {
            return false;
        }
        match ServerListPage::decode(datagram, master.is_ipv6(), true) {
            Ok(p) if p.key == Some(self.key) => {
                self.answered = true;
                let n = p.servers.len();
                let room = MAX_SERVERS_PER_MASTER - self.servers.len();
                if n >= room {
                    self.servers.extend(p.servers.into_iter().take(room));
                    tracing::warn!(%master, max = MAX_SERVERS_PER_MASTER, "master listed too many servers; the rest ignored");
                    return true;
                }
                self.servers.extend(p.servers);
                // Pages are filled in order: one smaller than an earlier page is the last.
                if self.largest_page > 0 && n < self.largest_page {
                    return true;
                }
                self.largest_page = self.largest_page.max(n);
            }
            Ok(_) => tracing::warn!(%master, "list page with a wrong key ignored"),
            Err(e) => tracing::warn!(%master, error = %e, "invalid list page ignored"),
        }
        false
    }
}

/// The servers several masters listed, each once, in the order first listed: a
/// server registered with two masters is queried once.
#[derive(Debug, Clone, Default)]
pub struct MergedList {
    servers: Vec<SocketAddr>,
    seen: HashSet<SocketAddr>,
    masters_answered: usize,
}

impl MergedList {
    /// An empty list, before any master answered.
    pub fn new() -> MergedList {
        MergedList::default()
    }

    /// Adds the list of one master that answered (possibly empty).
    pub fn add(&mut self, servers: Vec<SocketAddr>) {
        self.masters_answered += 1;
        let seen = &mut self.seen;
        self.servers
            .extend(servers.into_iter().filter(|s| seen.insert(*s)));
    }

    /// How many masters answered: none answering is a failed scan, while an empty
    /// list from one that answered is a valid result.
    pub fn masters_answered(&self) -> usize {
        self.masters_answered
    }

    /// The merged servers.
    pub fn servers(&self) -> &[SocketAddr] {
        &self.servers
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use xash::master::encode_pages;

    const KEY: u32 = 0xabcd;

    fn master() -> SocketAddr {
        "192.0.2.1:27010".parse().unwrap()
    }

    fn servers(n: u16) -> Vec<SocketAddr> {
        (0..n)
            .map(|i| SocketAddr::from(([198, 51, 100, (i % 250) as u8], 27015 + i)))
            .collect()
    }

    #[test]
    fn a_smaller_page_ends_the_list() {
        let all = servers(600);
        let pages = encode_pages(Some(KEY), &all, false, 1400);
        assert!(pages.len() >= 3);
        let mut list = ListPages::new(master(), KEY);
        let (last, rest) = pages.split_last().unwrap();
        for p in rest {
            assert!(!list.take(p, master()));
        }
        assert!(list.take(last, master()));
        assert_eq!(list.servers, all);
    }

    #[test]
    fn a_master_that_never_stops_sending_pages_is_cut_at_the_cap() {
        let page = encode_pages(Some(KEY), &servers(200), false, 1400);
        let mut list = ListPages::new(master(), KEY);
        let mut pages = 0;
        while !list.take(&page[0], master()) {
            pages += 1;
            assert!(pages < 1000, "still taking pages");
        }
        assert_eq!(list.servers.len(), MAX_SERVERS_PER_MASTER);
    }

    #[test]
    fn strangers_and_wrong_keys_are_ignored() {
        let pages = encode_pages(Some(KEY), &servers(3), false, 1400);
        let mut list = ListPages::new(master(), KEY);
        let stranger: SocketAddr = "192.0.2.2:27010".parse().unwrap();
        assert!(!list.take(&pages[0], stranger));
        let other_key = encode_pages(Some(KEY + 1), &servers(3), false, 1400);
        assert!(!list.take(&other_key[0], master()));
        assert!(!list.take(b"\xff\xff\xff\xfff\ntruncated", master()));
        assert!(!list.answered);
        // An empty list is still an answer.
        let empty = encode_pages(Some(KEY), &[], false, 1400);
        assert!(!list.take(&empty[0], master()));
        assert!(list.answered && list.servers.is_empty());
    }

    #[test]
    fn merged_lists_keep_the_first_order_and_drop_repeats() {
        let s = servers(4);
        let mut m = MergedList::new();
        m.add(vec![s[0], s[1], s[0]]);
        m.add(vec![]);
        m.add(vec![s[2], s[1], s[3]]);
        assert_eq!(m.servers(), &[s[0], s[1], s[2], s[3]]);
        assert_eq!(m.masters_answered(), 3);
    }

    /// A fake master on loopback that answers the second request only, in several
    /// pages: the scan retries, then collects them all.
    #[tokio::test]
    async fn scan_master_retries_and_collects_every_page() {
        let fake = tokio::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let addr = fake.local_addr().unwrap();
        let spec = ScanSpec {
            filter: InfoString::new().with("gamedir", "valve").unwrap(),
            key: KEY,
            wait: Duration::from_millis(300),
        };
        let all = servers(600);
        let pages = encode_pages(Some(KEY), &all, false, 1400);
        let serve = tokio::spawn(async move {
            let mut buf = [0u8; 2048];
            let (n, _) = fake.recv_from(&mut buf).await.unwrap();
            let first = buf[..n].to_vec();
            let (n, from) = fake.recv_from(&mut buf).await.unwrap();
            assert_eq!(buf[..n], first[..], "the retry repeats the request");
            let req = ScanRequest::decode(&first).unwrap();
            assert_eq!(req.filter.get_str("key").unwrap(), "abcd");
            for p in &pages {
                fake.send_to(p, from).await.unwrap();
            }
        });
        let got = scan_master(addr, &spec).await.unwrap();
        serve.await.unwrap();
        assert_eq!(got, Some(all));
    }
}
