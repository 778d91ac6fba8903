//! The process's Prometheus recorder (`metrics-exporter-prometheus`) and the
//! histograms the services record into as events happen: the UDP workers (relay
//! fan-out per datagram, master scan reply pages), the DNS prober (probe round trip)
//! and the HTTP stack (request time). Below the HTTP layer, so that a service records
//! without importing it; `/metrics` (`crate::http::metrics`) renders what is here.

use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};
use std::sync::OnceLock;
use std::time::Duration;

/// Relay fan-out: datagrams sent per datagram received.
pub const RELAY_FANOUT: &str = relay::stats::families::FANOUT.name;
/// Master scan reply pages per scan request.
pub const MASTER_SCAN_PAGES: &str = master::stats::families::SCAN_PAGES.name;
/// DNS prober round trip to a relay.
pub const DNS_PROBE_RTT: &str = directory::stats::families::PROBE_RTT.name;
/// HTTP request time until the response head (declared with the HTTP server's
/// counters, `crate::http::conn`).
pub const HTTP_REQUEST_TIME: &str = "lobby_http_request_duration_seconds";

/// Bucket bounds of each histogram.
pub(crate) const BUCKETS: &[(&str, &[f64])] = &[
    (
        RELAY_FANOUT,
        &[
            0.0, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0, 1024.0, 4096.0, 16384.0,
        ],
    ),
    (
        MASTER_SCAN_PAGES,
        &[
            0.0, 1.0, 2.0, 3.0, 4.0, 6.0, 8.0, 12.0, 16.0, 32.0, 64.0, 128.0,
        ],
    ),
    (
        DNS_PROBE_RTT,
        &[
            0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
        ],
    ),
    (
        HTTP_REQUEST_TIME,
        &[
            0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0,
        ],
    ),
];

/// The global recorder's handle; installed on first use. `None` if another
/// recorder was installed first (then nothing is recorded and `/metrics` says so).
static HANDLE: OnceLock<Option<PrometheusHandle>> = OnceLock::new();

/// Installs the process's Prometheus recorder (once; later calls return the same
/// handle). Call it before the parts start, so that their histograms record.
pub fn install() -> Option<&'static PrometheusHandle> {
    install_with(GAUGE_IDLE_DEFAULT)
}

/// A gauge not set for this long leaves `/metrics` (`[http] metrics_idle`).
const GAUGE_IDLE_DEFAULT: Duration = Duration::from_secs(600);

/// [`install`], with the time after which a gauge series that is no longer set
/// leaves the exposition (per-gamedir series of gamedirs with no server left;
/// every other gauge is set at each scrape). The first call decides.
pub fn install_with(gauge_idle: Duration) -> Option<&'static PrometheusHandle> {
    HANDLE
        .get_or_init(|| {
            let mut b = PrometheusBuilder::new()
                .idle_timeout(metrics_util::MetricKindMask::GAUGE, Some(gauge_idle));
            for (name, bounds) in BUCKETS {
                b = match b.set_buckets_for_metric(Matcher::Full((*name).to_string()), bounds) {
                    Ok(b) => b,
                    Err(e) => {
                        tracing::error!(metric = name, error = %e, "bad histogram buckets");
                        return None;
                    }
                };
            }
            match b.install_recorder() {
                Ok(h) => {
                    Some(h)
                }
                Err(e) => {
                    tracing::warn!(error = %e, "cannot install the metrics recorder; /metrics stays empty");
                    None
                }
            }
        })
        .as_ref()
}

/// Whether a recorder is installed (histograms record).
pub fn installed() -> bool {
    HANDLE.get().is_some_and(Option::is_some)
}

/// Drains recorded observations into the histograms' buckets now and then, so their
/// memory stays bounded when nobody scrapes (`metrics-exporter-prometheus` leaves it
/// to the caller).
pub async fn upkeep(stop: lifecycle::Stop) -> anyhow::Result<()> {
    let Some(h) = install() else {
        return Ok(());
    };
    loop {
        tokio::select! {
            _ = tokio::time::sleep(Duration::from_secs(5)) => h.run_upkeep(),
            _ = stop.stopped() => return Ok(()),
        }
    }
}
