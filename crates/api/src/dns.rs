//! `GET /api/dns`: the records the directory serves (and pushes) now.

use hickory_proto::rr::Record;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// One record in presentation form.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct DnsRecord {
    /// Owner name, fully qualified.
    pub name: String,
    /// Record type (`SOA`, `NS`, `SRV`, `TXT`, `A`, `AAAA`, `NAPTR`).
    #[serde(rename = "type")]
    pub rtype: String,
    /// TTL, seconds.
    pub ttl: u32,
    /// The record data in zone-file presentation format.
    pub data: String,
}

/// The body of `GET /api/dns`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct DnsBody {
    /// When the snapshot was taken, Unix seconds.
    pub generated_at: u64,
    /// The zone's origin, fully qualified.
    pub zone: String,
    /// The SOA serial.
    pub serial: u32,
    /// Every record of the zone, in the directory's order (SOA first).
    pub records: Vec<DnsRecord>,
}

/// The API form of one record.
pub fn record(r: &Record) -> DnsRecord {
    DnsRecord {
        name: r.name.to_string(),
        rtype: r.record_type().to_string(),
        ttl: r.ttl,
        data: r.data.to_string(),
    }
}
