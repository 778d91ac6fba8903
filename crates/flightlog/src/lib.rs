//! The flight log: every flight a relay sees (callsign, model, relay, start and end,
//! positions sampled every 10 s, distance, highest altitude) and Xash3D servers'
//! history (first and last seen, players over time).
//!
//! - [`track`]: pure: a position ([`Fix`]), the distance between two, the fastest
//!   speed believed; what `flights` and `logbook` share (a leaf: neither imports the
//!   other).
//! - [`flights`]: pure: what relays report becomes flights and database operations.
//! - [`share`]: pure: rate buckets, the share of sessions a pilot or an address may
//!   pass on, the share of a queue one relay may hold.
//! - [`logbook`]: pure: a flight's departure and arrival airports and moving time.
//! - [`tracked`]: pure: a relay's tracker lines as the same reports.
//! - [`rows`]: pure: what the store reads (flights, totals, leaderboards).
//! - [`backend`]: which database a URL names (pure).
//! - [`store`] (feature `store`, on by default): one sqlx code path for SQLite (the default, one file) and
//!   PostgreSQL, the same migrations (`migrations/`) for both, batched writes in
//!   one transaction, retention, and the queries behind the API.
//!
//! # One pilot cannot grow the log without bound (issue 20, item 1)
//!
//! A relay ends a pilot's session and begins another at every model or callsign
//! change, so a flip-flopping pilot begins sessions as fast as it sends datagrams.
//! The rule, in [`flights`] (pure, so it holds for the local relay's pilots and for
//! those reported through the tracker alike):
//!
//! - a session becomes a flight (a row) only once it **lasted `min_secs`** (60 s;
//!   `[history] min_flight_secs`); until then it is held in memory, its positions
//!   with it, and one that ends sooner leaves nothing (`too_short`): a flip-flop is
//!   nothing but held sessions replacing each other;
//! - new rows come at a **bounded rate per pilot slot** (relay and callsign: 4 at
//!   once, then one per 15 minutes) **and per source** (the pilot's address, IPv4 or
//!   IPv6 /64: 32, then one a minute; a relay reporting through the tracker, whose
//!   pilots have no address: 200, then one every 6 s); a session that lasted waits
//!   for room (its row then opens with its own start), or leaves nothing if it ends
//!   first (`over_rate`);
//! - a flight **ends after `max_secs`** (24 h; `max_flight_hours`), the next
//!   position beginning another, and its track is stored **sparser as it goes on**
//!   (every 10 s for 2 hours, then 20, 40 and 80 s: at most about 2,610 positions).
//!
//! Before the log, the relay's pilot feed passes on only a [`share::SessionShare`]
//! of each pilot's and address's sessions (to the tracker link too), and the
//! writer's queue holds a [`share::QueueShare`] per relay.

pub mod backend;
pub mod flights;
pub mod logbook;
pub mod rows;
pub mod share;
#[cfg(feature = "store")]
pub mod store;
pub mod track;
pub mod tracked;

pub use flights::{Fix, Flights, Op, Report, Totals};

#[cfg(feature = "store")]
pub use store::Store;
