//! Asking Xash3D FWGS and GoldSrc servers what players' tools ask them.
//!
//! [`Session`] is one query of one server as a pure state machine: it says what to
//! send, takes whatever comes back (split packets included) and the time, and ends
//! with an [`Outcome`]. It holds no socket and reads no clock, so its tests feed it
//! the real captures directly.
//!
//! [`run_many`] is the tokio glue: it runs many sessions at once over one UDP
//! socket per address family and only moves bytes between them.
//! [`scan_masters`] asks Xash3D masters for their lists, all at once, and
//! [`MergedList`] merges them, so each listed server is queried once.
//! [`static_list`] is what `lobby query` needs of a static HTTP list, fetched by
//! the caller's [`static_list::StaticLists`] (see there why).

#[cfg(feature = "cli")]
pub mod cli;
pub mod client_socket;
pub mod driver;
#[cfg(feature = "cli")]
pub mod master_admin;
pub mod master_scan;
pub mod session;
pub mod static_list;

pub use driver::{run_many, run_mixed, Progress, QueryOptions};
pub use master_scan::{scan_master, scan_masters, MasterAnswer, MergedList, ScanError, ScanSpec};
pub use session::{
    ansi_colors, strip_colors, Budget, ConnectResult, Dialect, Kind, Outcome, PlayerRow,
    ServerSummary, Session, Step,
};
