//! The one byte cursor every wire format of the workspace reads with: FlightGear's
//! big-endian datagrams (`fgmp`) and Xash3D's little-endian packets (`xash`).
//!
//! A [`Cursor`] borrows a byte slice and moves forward through it. Every read is
//! bounds-checked and fails without consuming anything; the byte order is in each
//! method's name (`u32_be`, `u32_le`). [`Cursor::rest`] looks at the unread bytes
//! without consuming them; [`Cursor::take_rest`] takes them.
//!
//! Each way a read can fail is its own small error type ([`Truncated`],
//! [`Unterminated`], [`Mismatch`], [`Trailing`]); a protocol crate turns the ones it
//! meets into its own error enum with `From`, so `?` works in its decoders.
//!
//! The writer helpers (`put_*`) append to a `Vec<u8>`; `*_at` read at a fixed
//! offset without a cursor.

/// A read needs more bytes than are left.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("truncated at byte {offset}: needed {needed}, {available} left")]
pub struct Truncated {
    /// Where the read began.
    pub offset: usize,
    /// Bytes it needed.
    pub needed: usize,
    /// Bytes that were left.
    pub available: usize,
}

/// A NUL-terminated string without its NUL.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("unterminated string at byte {offset}")]
pub struct Unterminated {
    /// Where the string began.
    pub offset: usize,
}

/// The bytes at the cursor are not the expected prefix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("expected prefix missing at byte {offset}")]
pub struct Mismatch {
    /// Where the prefix was expected.
    pub offset: usize,
}

/// Bytes left over where the message must end.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("{count} unexpected trailing bytes")]
pub struct Trailing {
    /// How many.
    pub count: usize,
}

/// Reads fields in order from a byte slice; every read is bounds-checked and a
/// failed one consumes nothing.
#[derive(Debug, Clone)]
pub struct Cursor<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    /// A cursor at the start of `buf`.
    pub fn new(buf: &'a [u8]) -> Self {
        Cursor { buf, pos: 0 }
    }

    /// Bytes consumed so far.
    pub fn position(&self) -> usize {
        self.pos
    }

    /// Bytes left to read.
    pub fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    /// Whether every byte has been read.
    pub fn is_empty(&self) -> bool {
        self.remaining() == 0
    }

    /// The unread bytes, not consumed.
    pub fn rest(&self) -> &'a [u8] {
        &self.buf[self.pos..]
    }

    /// The unread bytes, consumed: the cursor is empty afterwards.
    pub fn take_rest(&mut self) -> &'a [u8] {
        let r = self.rest();
        self.pos = self.buf.len();
        r
    }

    /// Takes the next `n` bytes.
    pub fn take(&mut self, n: usize) -> Result<&'a [u8], Truncated> {
        if n > self.remaining() {
            return Err(Truncated {
                offset: self.pos,
                needed: n,
                available: self.remaining(),
            });
        }
        let out = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(out)
    }

    /// Takes exactly `N` bytes as an array.
    pub fn array<const N: usize>(&mut self) -> Result<[u8; N], Truncated> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.take(N)?);
        Ok(out)
    }

    /// Consumes `prefix` if the unread bytes start with it; otherwise consumes nothing.
    pub fn expect(&mut self, prefix: &[u8]) -> Result<(), Mismatch> {
        if self.rest().starts_with(prefix) {
            self.pos += prefix.len();
            Ok(())
        } else {
            Err(Mismatch { offset: self.pos })
        }
    }

    /// A NUL-terminated string (the NUL is consumed, not returned).
    pub fn cstr(&mut self) -> Result<&'a [u8], Unterminated> {
        let rest = self.rest();
        let n = rest
            .iter()
            .position(|&b| b == 0)
            .ok_or(Unterminated { offset: self.pos })?;
        self.pos += n + 1;
        Ok(&rest[..n])
    }

    /// Fails unless every byte was read.
    pub fn finish(&self) -> Result<(), Trailing> {
        match self.remaining() {
            0 => Ok(()),
            count => Err(Trailing { count }),
        }
    }

    /// A byte.
    pub fn u8(&mut self) -> Result<u8, Truncated> {
        Ok(self.take(1)?[0])
    }

    /// A little-endian u16.
    pub fn u16_le(&mut self) -> Result<u16, Truncated> {
        Ok(u16::from_le_bytes(self.array()?))
    }

    /// A big-endian u16.
    pub fn u16_be(&mut self) -> Result<u16, Truncated> {
        Ok(u16::from_be_bytes(self.array()?))
    }

    /// A little-endian u32.
    pub fn u32_le(&mut self) -> Result<u32, Truncated> {
        Ok(u32::from_le_bytes(self.array()?))
    }

    /// A big-endian u32.
    pub fn u32_be(&mut self) -> Result<u32, Truncated> {
        Ok(u32::from_be_bytes(self.array()?))
    }

    /// A little-endian i32.
    pub fn i32_le(&mut self) -> Result<i32, Truncated> {
        Ok(i32::from_le_bytes(self.array()?))
    }

    /// A little-endian IEEE-754 binary32.
    pub fn f32_le(&mut self) -> Result<f32, Truncated> {
        Ok(f32::from_le_bytes(self.array()?))
    }

    /// A big-endian IEEE-754 binary32.
    pub fn f32_be(&mut self) -> Result<f32, Truncated> {
        Ok(f32::from_be_bytes(self.array()?))
    }

    /// A big-endian IEEE-754 binary64.
    pub fn f64_be(&mut self) -> Result<f64, Truncated> {
        Ok(f64::from_be_bytes(self.array()?))
    }

    /// Three big-endian binary32s (a vector); all or nothing consumed.
    pub fn f32x3_be(&mut self) -> Result<[f32; 3], Truncated> {
        let b: [u8; 12] = self.array()?;
        Ok(std::array::from_fn(|i| {
            f32::from_be_bytes([b[4 * i], b[4 * i + 1], b[4 * i + 2], b[4 * i + 3]])
        }))
    }

    /// Three big-endian binary64s (a vector); all or nothing consumed.
    pub fn f64x3_be(&mut self) -> Result<[f64; 3], Truncated> {
        let b: [u8; 24] = self.array()?;
        Ok(std::array::from_fn(|i| {
            let mut a = [0u8; 8];
            a.copy_from_slice(&b[8 * i..8 * i + 8]);
            f64::from_be_bytes(a)
        }))
    }
}

/// Appends a big-endian u32.
pub fn put_u32_be(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_be_bytes());
}

/// Appends a big-endian IEEE-754 binary32.
pub fn put_f32_be(out: &mut Vec<u8>, v: f32) {
    out.extend_from_slice(&v.to_be_bytes());
}

/// Appends a big-endian IEEE-754 binary64.
pub fn put_f64_be(out: &mut Vec<u8>, v: f64) {
    out.extend_from_slice(&v.to_be_bytes());
}

/// Appends a NUL-terminated string.
pub fn put_cstr(out: &mut Vec<u8>, s: &[u8]) {
    out.extend_from_slice(s);
    out.push(0);
}

/// The big-endian u32 at `off` in `buf`, if it is all there.
pub fn u32_be_at(buf: &[u8], off: usize) -> Option<u32> {
    Cursor::new(buf.get(off..)?).u32_be().ok()
}

/// The big-endian IEEE-754 binary64 at `off` in `buf`, if it is all there.
pub fn f64_be_at(buf: &[u8], off: usize) -> Option<f64> {
    Cursor::new(buf.get(off..)?).f64_be().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn reads_past_the_end_fail_and_consume_nothing() {
        let mut c = Cursor::new(&[1, 2, 3]);
        assert_eq!(
            c.u32_be(),
            Err(Truncated {
                offset: 0,
                needed: 4,
                available: 3
            })
        );
        assert_eq!(c.position(), 0, "a failed read consumes nothing");
        assert!(c.f32x3_be().is_err() && c.position() == 0);
        assert_eq!(c.take(3).unwrap(), &[1, 2, 3]);
        assert_eq!(
            c.take(1),
            Err(Truncated {
                offset: 3,
                needed: 1,
                available: 0
            })
        );
        assert!(c.u8().is_err());
        assert!(c.is_empty());
        assert_eq!(c.finish(), Ok(()));
    }

    #[test]
    fn both_byte_orders() {
        // FlightGear's magic `FGFS` and 1.0f32, big-endian.
        let mut c = Cursor::new(&[0x46, 0x47, 0x46, 0x53, 0x3f, 0x80, 0, 0]);
        assert_eq!(c.u32_be().unwrap(), 0x4647_4653);
        assert_eq!(c.f32_be().unwrap(), 1.0);
        let mut c = Cursor::new(&[
            0x01, 0x02, 0x01, 0x02, 0xff, 0xff, 0xff, 0xff, 0, 0, 0x80, 0x3f,
        ]);
        assert_eq!(c.u16_le().unwrap(), 0x0201);
        assert_eq!(c.u16_be().unwrap(), 0x0102);
        assert_eq!(c.i32_le().unwrap(), -1);
        assert_eq!(c.f32_le().unwrap(), 1.0);
        let mut c = Cursor::new(&[0x3f, 0xf0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(c.f64_be().unwrap(), 1.0);
        let mut c = Cursor::new(&[0xfe, 0xff, 0xff, 0xff, 0x7f]);
        assert_eq!(c.u32_le().unwrap(), 0xffff_fffe);
        assert_eq!(c.u8().unwrap(), 0x7f);
    }

    #[test]
    fn vectors_read_three_in_order() {
        let mut out = Vec::new();
        for v in [1.0f32, -2.5, 3.25] {
            put_f32_be(&mut out, v);
        }
        for v in [1e6f64, -0.5, 7.0] {
            put_f64_be(&mut out, v);
        }
        let mut c = Cursor::new(&out);
        assert_eq!(c.f32x3_be().unwrap(), [1.0, -2.5, 3.25]);
        assert_eq!(c.f64x3_be().unwrap(), [1e6, -0.5, 7.0]);
        assert!(c.is_empty());
    }

    #[test]
    fn strings_prefixes_and_the_end() {
        let mut c = Cursor::new(b"ab\0\x01\x02");
        assert_eq!(c.cstr().unwrap(), b"ab");
        assert_eq!(c.u16_le().unwrap(), 0x0201);
        assert!(c.u8().is_err());
        assert!(c.finish().is_ok());
        let mut c = Cursor::new(b"abc");
        assert_eq!(c.cstr(), Err(Unterminated { offset: 0 }));
        assert_eq!(c.position(), 0);
        assert_eq!(c.expect(b"x"), Err(Mismatch { offset: 0 }));
        assert_eq!(c.expect(b"abcd"), Err(Mismatch { offset: 0 }));
        assert_eq!(c.expect(b"ab"), Ok(()));
        assert_eq!(c.finish(), Err(Trailing { count: 1 }));
        let mut out = Vec::new();
        put_cstr(&mut out, b"hl");
        assert_eq!(out, b"hl\0");
    }

    #[test]
    fn rest_looks_and_take_rest_takes() {
        let mut c = Cursor::new(b"\xff\xffrest");
        c.expect(b"\xff\xff").unwrap();
        assert_eq!(c.rest(), b"rest");
        assert_eq!(c.rest(), b"rest", "rest consumes nothing");
        assert_eq!(c.remaining(), 4);
        assert_eq!(c.take_rest(), b"rest");
        assert!(c.is_empty() && c.rest().is_empty() && c.take_rest().is_empty());
        assert_eq!(c.position(), 6);
    }

    #[test]
    fn reads_at_an_offset() {
        assert_eq!(u32_be_at(&[0, 0, 0, 7], 0), Some(7));
        assert_eq!(u32_be_at(&[9, 0, 0, 0, 7], 1), Some(7));
        assert_eq!(u32_be_at(&[0, 0, 7], 0), None);
        assert_eq!(u32_be_at(&[0, 0, 7], 4), None);
        assert_eq!(u32_be_at(&[0, 0, 7], usize::MAX), None);
        let mut b = vec![1];
        put_f64_be(&mut b, -3.5);
        assert_eq!(f64_be_at(&b, 1), Some(-3.5));
        assert_eq!(f64_be_at(&b, 2), None);
        assert_eq!(f64_be_at(&b, usize::MAX), None);
        let mut b = Vec::new();
        put_u32_be(&mut b, 0x0102_0304);
        assert_eq!(b, [1, 2, 3, 4]);
    }

    proptest! {
        /// Any sequence of reads on any bytes: no panic, position plus remaining is
        /// the length, a failed read moves nothing, a good one moves by its size,
        /// and what was taken is the buffer's bytes in order.
        #[test]
        fn reads_never_overrun(buf in proptest::collection::vec(any::<u8>(), 0..64), ops in proptest::collection::vec(0u8..14, 0..40)) {
            let mut c = Cursor::new(&buf);
            for op in ops {
                let before = c.position();
                let rest = c.rest();
                let (size, ok) = match op {
                    0 => (1, c.u8().is_ok()),
                    1 => (2, c.u16_le().is_ok()),
                    2 => (2, c.u16_be().is_ok()),
                    3 => (4, c.u32_le().is_ok()),
                    4 => (4, c.u32_be().is_ok()),
                    5 => (4, c.i32_le().is_ok()),
                    6 => (4, c.f32_le().is_ok()),
                    7 => (4, c.f32_be().is_ok()),
                    8 => (8, c.f64_be().is_ok()),
                    9 => (12, c.f32x3_be().is_ok()),
                    10 => (24, c.f64x3_be().is_ok()),
                    11 => match c.cstr() {
                        Ok(s) => {
                            prop_assert_eq!(s, &rest[..s.len()]);
                            (s.len() + 1, true)
                        }
                        Err(e) => {
                            prop_assert!(!rest.contains(&0));
                            prop_assert_eq!(e.offset, before);
                            (rest.len() + 1, false)
                        }
                    },
                    12 => match c.take(3) {
                        Ok(t) => {
                            prop_assert_eq!(t, &rest[..3]);
                            (3, true)
                        }
                        Err(e) => (e.needed, false),
                    },
                    _ => {
                        let n = rest.len().min(2);
                        (n, c.expect(&rest[..n]).is_ok())
                    }
                };
                prop_assert_eq!(ok, size <= rest.len());
                prop_assert_eq!(c.position(), if ok { before + size } else { before });
                prop_assert_eq!(c.position() + c.remaining(), buf.len());
                prop_assert_eq!(c.finish().is_ok(), c.is_empty());
            }
        }

        /// Written big-endian, read back the same.
        #[test]
        fn writers_and_readers_agree(u in any::<u32>(), f in any::<f32>(), d in any::<f64>()) {
            let mut out = Vec::new();
            put_u32_be(&mut out, u);
            put_f32_be(&mut out, f);
            put_f64_be(&mut out, d);
            let mut c = Cursor::new(&out);
            prop_assert_eq!(c.u32_be().unwrap(), u);
            prop_assert_eq!(c.f32_be().unwrap().to_bits(), f.to_bits());
            prop_assert_eq!(c.f64_be().unwrap().to_bits(), d.to_bits());
            prop_assert_eq!(u32_be_at(&out, 0), Some(u));
            prop_assert_eq!(f64_be_at(&out, 8).map(f64::to_bits), Some(d.to_bits()));
        }
    }
}
