//! The zone hickory-server serves: the directory's records, with zone transfers
//! (AXFR) allowed only to the configured sources or TSIG keys.

use super::push::tsig_key;
use anyhow::{bail, Context, Result};
use config::DnsSection;
use directory::stats::{Counter, Stats};
use hickory_net::runtime::TokioRuntimeProvider;
use hickory_proto::op::ResponseCode;
use hickory_proto::rr::rdata::tsig::TsigError::BadTime;
use hickory_proto::rr::{LowerName, Name, Record, RecordType, TSigResponseContext, TSigner};
use hickory_server::dnssec::NxProofKind;
use hickory_server::server::{Request, RequestInfo};
use hickory_server::store::in_memory::InMemoryZoneHandler;
use hickory_server::zone_handler::{
    AuthLookup, AxfrPolicy, LookupControlFlow, LookupError, LookupOptions, Nsec3QueryInfo,
    UpdateRequest, ZoneHandler, ZoneTransfer, ZoneType,
};
use ipnet::IpNet;
use std::sync::Arc;

/// Who may transfer the zone.
#[derive(Clone, Default)]
pub(super) struct AxfrAccess {
    /// Off: every transfer refused.
    enabled: bool,
    /// Sources allowed without TSIG.
    allow: Vec<IpNet>,
    /// Keys a transfer may be signed with.
    keys: Vec<TSigner>,
}

impl AxfrAccess {
    pub(super) fn from_config(dns: &DnsSection) -> Result<AxfrAccess> {
        let allow = dns
            .axfr_allow
            .iter()
            .map(|s| config::net(s).with_context(|| format!("dns.axfr_allow {s:?}")))
            .collect::<Result<Vec<_>>>()?;
        let keys = if dns.axfr_tsig_key_name.is_empty() {
            if !dns.axfr_tsig_secret.is_empty() {
                bail!("dns.axfr_tsig_secret is set but dns.axfr_tsig_key_name is empty");
            }
            vec![]
        } else {
            vec![tsig_key(
                "axfr_tsig",
                &dns.axfr_tsig_key_name,
                &dns.axfr_tsig_algorithm,
                &dns.axfr_tsig_secret,
            )?]
        };
        if dns.allow_axfr && allow.is_empty() && keys.is_empty() {
            bail!("dns.allow_axfr is on but neither dns.axfr_allow nor dns.axfr_tsig_key_name is set: the zone would be open to anyone; list the secondaries' addresses or give a TSIG key");
        }
        Ok(AxfrAccess {
            enabled: dns.allow_axfr,
            allow,
            keys,
        })
    }
}

/// The served zone: hickory's in-memory zone, with zone transfers limited to the
/// allowed sources and TSIG keys, and one debug line per query.
pub(super) struct Guarded {
    pub(super) zone: InMemoryZoneHandler<TokioRuntimeProvider>,
    pub(super) access: AxfrAccess,
    pub(super) stats: Arc<Stats>,
}

impl Guarded {
    /// Whether `request` may transfer the zone, and the signer of the answer when
    /// it was signed. A refusal is counted, and logged at info at most once a
    /// second (at debug otherwise): strangers choose how often they ask.
    fn authorize(
        &self,
        request: &Request,
        now: u64,
    ) -> (Result<(), ResponseCode>, Option<TSigResponseContext>) {
        let peer = request.src();
        let refuse = |counter, code, why: String, signer| {
            self.stats.count(counter);
            static GATE: telemetry::LogGate = telemetry::LogGate::new();
            if GATE.warn_at(now) {
                tracing::info!(%peer, "zone transfer refused: {why} (at most one such line a second)");
            } else {
                tracing::debug!(%peer, "zone transfer refused: {why}");
            }
            (Err(code), signer)
        };
        let (unsigned, bad_tsig) = (Counter::AxfrRefusedUnsigned, Counter::AxfrRefusedBadTsig);
        if !self.access.enabled {
            let why = "dns.allow_axfr is off".into();
            return refuse(unsigned, ResponseCode::Refused, why, None);
        }
        let Some(tsig) = request.signature() else {
            if self.access.allow.iter().any(|n| n.contains(&peer.ip())) {
                self.stats.count(Counter::AxfrAllowed);
                tracing::info!(%peer, "zone transfer (allowed source)");
                return (Ok(()), None);
            }
            let why = "unsigned, and the source is not in dns.axfr_allow".into();
            return refuse(unsigned, ResponseCode::Refused, why, None);
        };
        let (id, name, notauth) = (request.id(), &tsig.name, ResponseCode::NotAuth);
        let Some(key) = self.access.keys.iter().find(|k| k.signer_name() == name) else {
            let signer = TSigResponseContext::unknown_key(id, now, name.clone());
            let why = format!("unknown TSIG key {name} (BADKEY)");
            return refuse(bad_tsig, notauth, why, Some(signer));
        };
        let signer = |e| TSigResponseContext::new(id, now, key.clone(), tsig.data.mac.clone(), e);
        match key.verify_message_byte(request.as_slice(), None, true) {
            Err(_) => {
                let signer = TSigResponseContext::bad_signature(id, now, key.clone());
                let why = format!("bad TSIG signature with key {name} (BADSIG)");
                refuse(bad_tsig, notauth, why, Some(signer))
            }
            Ok((_, _, range)) if !range.contains(&now) => {
                let why = format!("TSIG time outside the fudge, key {name} (BADTIME)");
                refuse(bad_tsig, notauth, why, Some(signer(Some(BadTime))))
            }
            Ok(_) => {
                self.stats.count(Counter::AxfrAllowed);
                tracing::info!(%peer, key = %name, "zone transfer (TSIG)");
                (Ok(()), Some(signer(None)))
            }
        }
    }
}

#[async_trait::async_trait]
impl ZoneHandler for Guarded {
    fn zone_type(&self) -> ZoneType {
        self.zone.zone_type()
    }

    fn axfr_policy(&self) -> AxfrPolicy {
        if self.access.enabled {
            AxfrPolicy::AllowAll
        } else {
            AxfrPolicy::Deny
        }
    }

    fn origin(&self) -> &LowerName {
        self.zone.origin()
    }

    async fn lookup(
        &self,
        name: &LowerName,
        rtype: RecordType,
        request_info: Option<&RequestInfo<'_>>,
        lookup_options: LookupOptions,
    ) -> LookupControlFlow<AuthLookup> {
        self.zone
            .lookup(name, rtype, request_info, lookup_options)
            .await
    }

    async fn search(
        &self,
        request: &Request,
        lookup_options: LookupOptions,
    ) -> (LookupControlFlow<AuthLookup>, Option<TSigResponseContext>) {
        if let Ok(info) = request.request_info() {
            tracing::debug!(peer = %request.src(), proto = %request.protocol(), name = %info.query.name(), qtype = %info.query.query_type(), "dns query");
            if info.query.query_type() == RecordType::IXFR {
                let (r, signer) = self.authorize(request, udp::time::unix_secs() as u64);
                if let Err(code) = r {
                    return (
                        LookupControlFlow::Break(Err(LookupError::from(code))),
                        signer,
                    );
                }
            }
        }
        self.zone.search(request, lookup_options).await
    }

    async fn nsec_records(
        &self,
        name: &LowerName,
        lookup_options: LookupOptions,
    ) -> LookupControlFlow<AuthLookup> {
        self.zone.nsec_records(name, lookup_options).await
    }

    async fn nsec3_records(
        &self,
        info: Nsec3QueryInfo<'_>,
        lookup_options: LookupOptions,
    ) -> LookupControlFlow<AuthLookup> {
        self.zone.nsec3_records(info, lookup_options).await
    }

    async fn zone_transfer(
        &self,
        request: &Request,
        lookup_options: LookupOptions,
        now: u64,
    ) -> Option<(
        Result<ZoneTransfer, LookupError>,
        Option<TSigResponseContext>,
    )> {
        tracing::debug!(peer = %request.src(), proto = %request.protocol(), "dns zone transfer request");
        let (r, signer) = self.authorize(request, now);
        if let Err(code) = r {
            return Some((Err(LookupError::from(code)), signer));
        }
        let (result, _) = self
            .zone
            .zone_transfer(request, lookup_options, now)
            .await?;
        Some((result, signer))
    }

    fn nx_proof_kind(&self) -> Option<&NxProofKind> {
        self.zone.nx_proof_kind()
    }
}

/// The hickory zone holding `records` (zone transfers are decided by [`Guarded`]).
pub(super) fn zone_handler(
    origin: &Name,
    records: Vec<Record>,
    serial: u32,
) -> InMemoryZoneHandler<TokioRuntimeProvider> {
    let mut z = InMemoryZoneHandler::<TokioRuntimeProvider>::empty(
        origin.clone(),
        ZoneType::Primary,
        AxfrPolicy::AllowAll,
        None,
    );
    for r in records {
        z.upsert_mut(r, serial);
    }
    z
}

/// The zone hickory serves, shared with the prober that updates it.
pub(super) type ServedZone = Arc<Guarded>;
