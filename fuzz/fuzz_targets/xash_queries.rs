//! Every A2S, split-packet and handshake decoder of the `xash` crate on arbitrary
//! bytes: none may panic, whatever one accepts must re-encode to something it
//! decodes again to the same bytes (split fragments re-encode to exactly the
//! input), and the reassembler, fed the input cut into fragments, stays within its
//! memory bounds.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| fuzzing::xash_queries::run(data));
