//! The report lines: `CONNECT`, `DISCONNECT` and `POSITION`, written as fgms 0.13.10
//! writes them and read as fgtracker (v2.4) reads them.
//!
//! A message is one or more lines joined by `\n` (fgms puts one `POSITION` line per
//! pilot into one message every 10 s); the tracker commits each message as one
//! database transaction.

mod field;
mod line;
mod time;

pub use self::time::{format_time, parse_time};
pub use field::{model_name, sanitize_field};
pub use line::{parse_line, parse_nowait_line, split_message, Line, Parsed};

pub(crate) use field::PHP_TRIM;
