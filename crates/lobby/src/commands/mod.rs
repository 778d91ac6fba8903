//! The commands of the `lobby` binary, one module each (the serving commands `up`,
//! `relay`, `master` and `dns` share `serve`).

pub mod load;
pub mod serve;
pub mod sim;
