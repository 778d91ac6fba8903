//! Fuzzes the property-list codec: decoding arbitrary bytes must never panic, must
//! re-encode to exactly the input, and a fully parsed list must survive a rebuild
//! through the validating builder and decode to the same list again.

use fgmp::props::PropertyList;
/// The fuzz target's body: arbitrary bytes in; panics on a broken invariant.
pub fn run(data: &[u8]) {
    let list = PropertyList::decode(data);

    // Canonical round trip, even for garbage: items plus the kept trailing bytes.
    let bytes = list.to_bytes();
    assert_eq!(bytes, data, "re-encoding must reproduce the input");
    assert_eq!(list.encoded_len(), data.len());
    assert_eq!(list.stop.is_none(), list.trailing.is_empty());
    for p in list.items() {
        let _ = p.value();
        let _ = p.text();
    }

    // Decoding the re-encoded bytes gives the same list.
    let again = PropertyList::decode(&bytes);
    assert_eq!(again, list, "decode(encode(decode(x))) == decode(x)");

    if list.stop.is_none() {
        // A complete parse: every item is one the builder accepts, and the rebuilt list
        // encodes to the same bytes and decodes equal.
        let rebuilt = match PropertyList::from_items(list.items().iter().cloned()) {
            Ok(l) => l,
            Err(e) => panic!("decoded item rejected by push: {e}"),
        };
        let rebuilt_bytes = rebuilt.to_bytes();
        assert_eq!(rebuilt_bytes, data);
        assert_eq!(PropertyList::decode(&rebuilt_bytes), rebuilt);
    }
}
