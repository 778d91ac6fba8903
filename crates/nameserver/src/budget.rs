//! DNS over UDP within a budget per source: hickory's UDP server hands every query
//! to [`Budgeted`], which answers through the catalog while the source (an IPv4
//! address or IPv6 /64, and its /24, /56 and /48 at the multiples of
//! `sansio::quota::WIDER`) has budget left (`[dns] udp_rate` a second, `udp_burst`
//! at once: `master::ratelimit::RateLimiter`, the master's fixed-size table). Past
//! it a query gets nothing, except every second one, which gets an empty answer
//! with TC set, no larger than the query: a resolver that shares the address with a
//! flood retries over TCP, where connections have caps of their own. A spoofed
//! victim's address thus draws at most its budget in answers, however much is sent
//! in its name. TCP queries are not counted here.

use directory::stats::{Counter, Stats};
use hickory_net::{runtime::Time, xfer::Protocol};
use hickory_proto::op::{Header, Metadata};
use hickory_server::server::{Request, RequestHandler, ResponseHandler, ResponseInfo};
use hickory_server::zone_handler::{Catalog, MessageResponseBuilder};
use master::ratelimit::{RateLimiter, Verdict};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// Sources whose budgets are tracked at once (the table never grows past it).
const TRACKED: usize = 65_536;

/// The catalog behind a per-source budget for UDP queries.
pub(super) struct Budgeted {
    catalog: Catalog,
    budget: Mutex<RateLimiter>,
    over: AtomicU64,
    stats: Arc<Stats>,
}

impl Budgeted {
    /// `catalog` answering each source at most `burst` at once, `rate` a second.
    pub(super) fn new(
        catalog: Catalog,
        budget: config::DnsUdpBudget,
        stats: Arc<Stats>,
    ) -> Budgeted {
        Budgeted {
            catalog,
            budget: Mutex::new(RateLimiter::per_second(budget.burst, budget.rate, TRACKED)),
            over: AtomicU64::new(0),
            stats,
        }
    }
}

#[async_trait::async_trait]
impl RequestHandler for Budgeted {
    async fn handle_request<R: ResponseHandler, T: Time>(
        &self,
        request: &Request,
        mut response: R,
    ) -> ResponseInfo {
        let within = request.protocol() != Protocol::Udp
            || lifecycle::lock(&self.budget).check(request.src().ip(), Instant::now())
                == Verdict::Allow;
        if within {
            return self.catalog.handle_request::<R, T>(request, response).await;
        }
        let mut metadata = Metadata::response_from_request(&request.metadata);
        let info = ResponseInfo::from(Header {
            metadata,
            counts: Default::default(),
        });
        if self.over.fetch_add(1, Relaxed) % 2 == 1 {
            self.stats.count(Counter::UdpDropped);
            return info;
        }
        self.stats.count(Counter::UdpTruncated);
        metadata.truncation = true;
        let empty =
            MessageResponseBuilder::from_message_request(request).build_no_records(metadata);
        match response.send_response(empty).await {
            Ok(info) => info,
            Err(e) => {
                tracing::debug!(peer = %request.src(), error = %e, "DNS truncated answer not sent");
                info
            }
        }
    }
}
