//! Reading the real FlightGear captures in `testdata/fg` (shared by the test files).
#![allow(dead_code)]

use std::fs;

/// The path of a file under `testdata/fg`.
pub(crate) fn data_path(rel: &str) -> String {
    format!("{}/../../testdata/fg/{rel}", env!("CARGO_MANIFEST_DIR"))
}

/// A capture file's bytes.
pub(crate) fn read(rel: &str) -> Vec<u8> {
    let path = data_path(rel);
    fs::read(&path).unwrap_or_else(|e| panic!("cannot read {path}: {e}"))
}

/// The datagrams of a length-prefixed (`u32` BE length + bytes) capture file.
pub(crate) fn lpf(rel: &str) -> Vec<Vec<u8>> {
    let b = read(rel);
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let n = u32::from_be_bytes(b[i..i + 4].try_into().expect("4 bytes")) as usize;
        out.push(b[i + 4..i + 4 + n].to_vec());
        i += 4 + n;
    }
    out
}
