//! The OpenAPI document (`GET /api/openapi.json`), generated from the handlers'
//! `#[utoipa::path]` attributes, each written next to its handler, and the query
//! structs' `IntoParams` (their types, defaults and bounds). It reads the routes; they
//! do not read it: `http::server` serves both.

use crate::http::admin::{change, show};
use crate::http::reply::json_text;
use crate::http::routes::{airports, dns, flights, ops, pilots, relays, servers};
use api::dns::DnsBody;
use api::health::{HealthBody, PartStatus, ReadyBody};
use api::pilots::{Pilot, PilotsBody};
use api::relays::{Link, RelayInfo, RelaysBody};
use api::servers::{ServerEntry, ServersBody};
use api::stream::Update;
use api::ErrorBody;
use axum::response::Response;
use axum::routing::get;
use axum::Router;
use utoipa::OpenApi;

/// The OpenAPI document of every documented path.
#[derive(OpenApi)]
#[openapi(
    info(
        title = "lobby",
        description = "The HTTP API of lobby: FlightGear relay, Xash3D master and DNS directory. Times are Unix seconds (UTC), angles degrees, units in the field names; unknown values are null. See docs/API.md."
    ),
    paths(
        pilots::pilots,
        pilots::pilots_stream,
        pilots::chat,
        pilots::atc,
        servers::servers,
        servers::register,
        servers::details,
        servers::heatmaps,
        relays::relays,
        dns::dns,
        ops::healthz,
        ops::readyz,
        flights::flights,
        flights::flight,
        flights::gpx,
        flights::kml,
        flights::callsign,
        flights::callsign_csv,
        flights::leaderboards,
        flights::server_history,
        airports::list,
        airports::one,
        show::show,
        change::add,
        change::delete
    ),
    components(schemas(
        PilotsBody,
        Pilot,
        Update,
        api::pilots::Transponder,
        api::chat::ChatBody,
        api::chat::ChatLine,
        api::chat::ChatCounters,
        api::atc::AtcBody,
        api::atc::Station,
        ServersBody,
        ServerEntry,
        api::servers::RegisterRequest,
        api::servers::RegisterBody,
        api::servers::ServerDetails,
        api::servers::DetailsPlayer,
        api::servers::HeatmapsBody,
        api::servers::GamedirHeat,
        RelaysBody,
        RelayInfo,
        api::relays::Thinning,
        api::relays::TierCount,
        Link,
        api::relays::Published,
        DnsBody,
        api::dns::DnsRecord,
        HealthBody,
        ReadyBody,
        PartStatus,
        ErrorBody,
        api::flights::FlightsBody,
        api::flights::FlightEntry,
        api::flights::Point,
        api::flights::FlightBody,
        api::flights::TrackFeature,
        api::flights::LineString,
        api::flights::CallsignBody,
        api::flights::AircraftTotals,
        api::flights::AirportTotals,
        api::flights::LeaderboardBody,
        api::flights::Leader,
        api::flights::ServerHistoryBody,
        api::flights::ServerSamplePoint,
        api::airports::AirportsBody,
        api::airports::Airport,
        api::admin::ChangeRequest,
        api::admin::ChangeBody,
        api::admin::ListBody,
        api::admin::ListEntry,
        api::admin::DeletedEntry,
        api::admin::UsersBody,
        api::admin::User,
        api::admin::VersionBody,
        api::admin::UptimeBody,
        api::admin::TrackerBody
    )),
    modifiers(&BearerAuth)
)]
pub struct ApiDoc;

/// The admin API's bearer tokens, in the document.
struct BearerAuth;

impl utoipa::Modify for BearerAuth {
    fn modify(&self, doc: &mut utoipa::openapi::OpenApi) {
        use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
        let components = doc.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()),
        );
    }
}

/// The OpenAPI document as JSON.
pub fn openapi_json() -> String {
    let mut doc = ApiDoc::openapi();
    doc.info.version = env!("CARGO_PKG_VERSION").to_string();
    doc.to_json().unwrap_or_default()
}

/// The document's route, `GET /api/openapi.json`.
pub fn routes() -> Router {
    Router::new().route("/api/openapi.json", get(openapi))
}

async fn openapi() -> Response {
    json_text(openapi_json())
}
