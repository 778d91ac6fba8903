//! What the API's tests share: a pilot to build bodies from.

use api::pilots::Pilot;

/// A Cessna 172P at (`lat`, `lon`), 3,000 ft, heading 280, 100 kt, on protocol v2,
/// with no chat, radio, transponder or livery.
#[allow(dead_code)] // params.rs builds no pilot
pub(crate) fn pilot_at(cs: &str, lat: f64, lon: f64) -> Pilot {
    Pilot {
        callsign: cs.into(),
        model: "Aircraft/c172p/Models/c172p.xml".into(),
        aircraft: "c172p".into(),
        aircraft_name: "Cessna 172P Skyhawk".into(),
        class: "single_prop".into(),
        lat,
        lon,
        alt_ft: 3000.0,
        heading: 280.0,
        pitch: 0.0,
        roll: 0.0,
        ground_speed_kt: 100.0,
        local: true,
        relay: None,
        online_since: 0,
        last_seen: 0,
        protocol: 2,
        atc: false,
        chat: None,
        frequency_mhz: None,
        transponder: None,
        livery: None,
        variant: None,
        rate_hz: None,
        lag_s: 0.1,
        sim_time: 0.0,
        clock_rate: None,
    }
}

/// The query `pairs` read as a route's parameters, the error as its text.
#[allow(dead_code)] // not every test file reads a query
pub(crate) fn q<T>(pairs: &[(&str, &str)]) -> Result<T, String>
where
    T: serde::de::DeserializeOwned + utoipa::IntoParams + api::params::Bounds,
{
    let text = serde_urlencoded::to_string(pairs).unwrap();
    api::params::parse(&text).map_err(|e| e.to_string())
}
