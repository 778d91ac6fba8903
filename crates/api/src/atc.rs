//! `GET /api/atc`: the ATC stations among the relay's pilots (fgms's rule, see
//! [`fgmp::extras::is_atc`]) with their frequency and airport.

use crate::pilots::Pilot;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// One ATC station.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Station {
    /// Callsign (`EDDF_TW`).
    pub callsign: String,
    /// The airport its callsign names (the part before the last `_`, 3 or 4
    /// letters or digits), if any.
    pub airport: Option<String>,
    /// The airport's name, where the embedded airport table knows its ident.
    pub airport_name: Option<String>,
    /// The position kind its callsign ends with: `DL` (delivery), `GN` (ground), `TW`
    /// (tower), `AP` (approach), `DE` (departure), `CT` (centre).
    pub position: String,
    /// Transmit frequency, MHz, if its client sends one (property 13001).
    pub frequency_mhz: Option<f64>,
    /// The client's model (`OpenRadar`, or one containing `ATC`, such as `ATC-pie`).
    pub model: String,
    /// Where it sits, degrees.
    pub lat: f64,
    /// Where it sits, degrees.
    pub lon: f64,
    /// When it joined, Unix seconds.
    pub online_since: u64,
}

/// The body of `GET /api/atc`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct AtcBody {
    /// When the snapshot was taken, Unix seconds.
    pub generated_at: u64,
    /// The stations, by callsign.
    pub stations: Vec<Station>,
}

/// The ATC stations of `pilots`, by callsign.
pub fn stations(pilots: &[Pilot]) -> Vec<Station> {
    let mut v: Vec<Station> = pilots
        .iter()
        .filter(|p| p.atc)
        .map(|p| {
            let airport = fgmp::extras::atc_airport(&p.callsign);
            Station {
                callsign: p.callsign.clone(),
                airport: airport.map(str::to_string),
                airport_name: airport
                    .and_then(|a| airports::table().get(a))
                    .map(|a| a.name.to_string()),
                position: p
                    .callsign
                    .rsplit_once('_')
                    .map_or(String::new(), |(_, k)| k.to_string()),
                frequency_mhz: p.frequency_mhz,
                model: p.model.clone(),
                lat: p.lat,
                lon: p.lon,
                online_since: p.online_since,
            }
        })
        .collect();
    v.sort_by(|a, b| a.callsign.cmp(&b.callsign));
    v
}
