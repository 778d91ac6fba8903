//! The flight log: every flight a relay sees (callsign, model, relay, start and end,
//! positions sampled every 10 s, distance, highest altitude) and Xash3D servers'
//! history (first and last seen, players over time).
//!
//! - [`flights`]: pure: what relays report becomes flights and database operations.
//! - [`backend`]: which database a URL names (pure).
//! - [`store`] (feature `store`, on by default): one sqlx code path for SQLite (the default, one file) and
//!   PostgreSQL, the same migrations (`migrations/`) for both, batched writes in
//!   one transaction, retention, and the queries behind the API.

pub mod backend;
pub mod flights;
#[cfg(feature = "store")]
pub mod store;

pub use flights::{Fix, Flights, Op, Report, Totals};

#[cfg(feature = "store")]
pub use store::Store;
