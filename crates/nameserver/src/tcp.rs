//! DNS over TCP: lobby's own accept loop (hickory's accepted without limit), within
//! `[dns] max_tcp_connections` and `max_tcp_per_ip`; each connection waits at most
//! `tcp_idle_timeout` for a query and as long to read one or write one answer, and
//! carries at most `directory::tcp::MAX_QUERIES_PER_CONNECTION` queries. At a cap
//! the connection that has waited longest for a query (at the per-source cap, one
//! of that source's own) is closed for the new one ([`udp::Waiting::admit`], as
//! HTTP does). The catalog answers as over UDP, with
//! the client's address (AXFR access sees it).

use anyhow::Result;
use directory::stats::{Counter, Stats};
use directory::tcp::{form_error, frame, MAX_QUERIES_PER_CONNECTION};
use hickory_net::{runtime::TokioTime, xfer::Protocol, NetError};
use hickory_proto::{op::MessageType, rr::Record, serialize::binary::BinEncoder};
use hickory_server::server::{Request, RequestHandler, ResponseHandler, ResponseInfo};
use hickory_server::zone_handler::{Catalog, MessageResponse};
use lifecycle::{accept, Stop, Tasks};
use std::{net::SocketAddr, sync::Arc, time::Duration};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::time::timeout;
use udp::{ConnLimiter, Place, Refusal, Waiting};

/// What every DNS TCP connection shares.
pub(super) struct Tcp {
    pub(super) catalog: Catalog,
    pub(super) open: ConnLimiter,
    /// Connections waiting for their next query, oldest first.
    pub(super) waiting: Waiting,
    pub(super) timeout: Duration,
    pub(super) stats: Arc<Stats>,
}

/// Accepts DNS TCP connections until the stop signal; one closed at once (nothing
/// read, nothing sent) when its source or the listener has its share open.
pub(super) async fn serve(l: TcpListener, tcp: Arc<Tcp>, tasks: Tasks, stop: Stop) -> Result<()> {
    let failed = || tcp.stats.count(Counter::TcpAcceptErrors);
    loop {
        let (conn, peer) = tokio::select! {
            c = accept(&l, "DNS TCP", failed) => c,
            _ = stop.stopped() => return Ok(()),
        };
        let slot = match tcp.waiting.admit(&tcp.open, peer.ip()) {
            Ok((s, made_room)) => {
                if made_room {
                    tcp.stats.count(Counter::TcpEvicted);
                }
                s
            }
            Err(why) => {
                tcp.stats.count(match why {
                    Refusal::PerSource => Counter::TcpRefusedPerIp,
                    Refusal::Total => Counter::TcpRefusedTotal,
                });
                tracing::debug!(%peer, ?why, "DNS TCP connection refused");
                continue;
            }
        };
        tcp.stats.count(Counter::TcpAccepted);
        let (tcp, stop) = (tcp.clone(), stop.clone());
        let cut = Arc::new(tokio::sync::Notify::new());
        let told = cut.clone();
        let place = Place::new(slot, move || told.notify_one());
        tasks.spawn(async move {
            let mut conn = conn; // closed once counted, then its place freed
            tokio::select! {
                why = tcp.converse(&mut conn, peer, &place) => if let Some(c) = why {
                    tcp.stats.count(c);
                    tracing::debug!(%peer, why = ?c, "DNS TCP connection closed");
                },
                _ = cut.notified() => tracing::debug!(%peer, "DNS TCP connection closed for a new one"),
                _ = stop.stopped() => {}
            }
            tcp.waiting.done(&place);
        });
    }
}

impl Tcp {
    /// Answers the connection's queries in turn; why lobby closed it, if it did.
    async fn converse(
        &self,
        conn: &mut TcpStream,
        peer: SocketAddr,
        place: &Arc<Place>,
    ) -> Option<Counter> {
        for _ in 0..MAX_QUERIES_PER_CONNECTION {
            let raw = match self.read(conn, place).await {
                Ok(raw) => raw,
                Err(why) => return why,
            };
            let formerr = form_error(&raw);
            let answers = Answers::default();
            match Request::from_bytes(raw, peer, Protocol::Tcp) {
                Ok(r) if r.metadata.message_type == MessageType::Response => continue,
                Ok(r) => {
                    let h = answers.clone();
                    let _ = self.catalog.handle_request::<_, TokioTime>(&r, h).await;
                }
                Err(_) => {
                    let _ = self.write(conn, formerr.map(|f| f.to_vec())).await;
                    return Some(Counter::TcpMalformed);
                }
            }
            let taken = std::mem::take(&mut *lifecycle::lock(&answers.0));
            if let Err(why) = self.write(conn, taken).await {
                return why;
            }
        }
        Some(Counter::TcpQueryCap)
    }

    /// The next message, or why there is none: `None` when the peer closed or
    /// failed, the timer when one ran out.
    async fn read(
        &self,
        conn: &mut TcpStream,
        place: &Arc<Place>,
    ) -> Result<Vec<u8>, Option<Counter>> {
        let mut len = [0u8; 2];
        self.waiting.enter(place);
        let first = timeout(self.timeout, conn.read(&mut len[..1])).await;
        self.waiting.leave(place);
        match first {
            Err(_) => return Err(Some(Counter::TcpIdleTimeout)),
            Ok(Ok(1)) => {}
            Ok(_) => return Err(None),
        }
        let rest = async {
            conn.read_exact(&mut len[1..]).await?;
            let mut m = vec![0u8; usize::from(u16::from_be_bytes(len))];
            conn.read_exact(&mut m).await.map(|_| m)
        };
        match timeout(self.timeout, rest).await {
            Err(_) => Err(Some(Counter::TcpReadTimeout)),
            Ok(r) => r.map_err(|_| None),
        }
    }

    /// Writes `messages`, each behind its length and within the timeout.
    async fn write(
        &self,
        conn: &mut TcpStream,
        messages: impl IntoIterator<Item = Vec<u8>>,
    ) -> Result<(), Option<Counter>> {
        for m in messages {
            let framed = frame(&m).ok_or(None)?;
            match timeout(self.timeout, conn.write_all(&framed)).await {
                Ok(r) => r.map_err(|_| None)?,
                Err(_) => return Err(Some(Counter::TcpWriteTimeout)),
            }
        }
        Ok(())
    }
}

/// The catalog's answers to one query (an AXFR may be several), encoded; written
/// once the catalog is done.
#[derive(Clone, Default)]
struct Answers(Arc<std::sync::Mutex<Vec<Vec<u8>>>>);

#[async_trait::async_trait]
impl ResponseHandler for Answers {
    async fn send_response<'a>(
        &mut self,
        response: MessageResponse<
            '_,
            'a,
            impl Iterator<Item = &'a Record> + Send + 'a,
            impl Iterator<Item = &'a Record> + Send + 'a,
            impl Iterator<Item = &'a Record> + Send + 'a,
            impl Iterator<Item = &'a Record> + Send + 'a,
        >,
    ) -> Result<ResponseInfo, NetError> {
        let mut bytes = Vec::with_capacity(512);
        let mut encoder = BinEncoder::new(&mut bytes);
        encoder.set_max_size(u16::MAX);
        let info = response.destructive_emit(&mut encoder)?;
        lifecycle::lock(&self.0).push(bytes);
        Ok(info)
    }
}
