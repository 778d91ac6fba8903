//! A big-endian reader that never reads past the end of its buffer, and the matching writer helpers.

use crate::Error;

/// Reads big-endian scalars from a byte slice. Every read is bounds-checked and
/// returns [`Error::Truncated`] instead of panicking.
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

    /// The unread rest of the buffer, without consuming it.
    pub fn rest(&self) -> &'a [u8] {
        &self.buf[self.pos..]
    }

    /// Takes the next `n` bytes.
    pub fn take(&mut self, n: usize) -> Result<&'a [u8], Error> {
        if n > self.remaining() {
            return Err(Error::Truncated {
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
    pub fn array<const N: usize>(&mut self) -> Result<[u8; N], Error> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.take(N)?);
        Ok(out)
    }

    /// Reads a big-endian u32.
    pub fn u32(&mut self) -> Result<u32, Error> {
        Ok(u32::from_be_bytes(self.array()?))
    }

    /// Reads a big-endian i32.
    pub fn i32(&mut self) -> Result<i32, Error> {
        Ok(i32::from_be_bytes(self.array()?))
    }

    /// Reads a big-endian IEEE-754 binary32.
    pub fn f32(&mut self) -> Result<f32, Error> {
        Ok(f32::from_bits(self.u32()?))
    }

    /// Reads a big-endian IEEE-754 binary64.
    pub fn f64(&mut self) -> Result<f64, Error> {
        Ok(f64::from_bits(u64::from_be_bytes(self.array()?)))
    }

    /// Reads three big-endian f32s.
    pub fn vec3f(&mut self) -> Result<[f32; 3], Error> {
        Ok([self.f32()?, self.f32()?, self.f32()?])
    }

    /// Reads three big-endian f64s.
    pub fn vec3d(&mut self) -> Result<[f64; 3], Error> {
        Ok([self.f64()?, self.f64()?, self.f64()?])
    }
}

/// Appends a big-endian u32.
pub fn put_u32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_be_bytes());
}

/// Appends a big-endian f32.
pub fn put_f32(out: &mut Vec<u8>, v: f32) {
    put_u32(out, v.to_bits());
}

/// Appends a big-endian f64.
pub fn put_f64(out: &mut Vec<u8>, v: f64) {
    out.extend_from_slice(&v.to_bits().to_be_bytes());
}

/// Reads a big-endian u32 at `off` in `buf`, if it is there.
pub fn u32_at(buf: &[u8], off: usize) -> Option<u32> {
    let b = buf.get(off..off.checked_add(4)?)?;
    Some(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
}

/// Reads a big-endian f64 at `off` in `buf`, if it is there.
pub fn f64_at(buf: &[u8], off: usize) -> Option<f64> {
    let b = buf.get(off..off.checked_add(8)?)?;
    let mut a = [0u8; 8];
    a.copy_from_slice(b);
    Some(f64::from_bits(u64::from_be_bytes(a)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_past_end_are_errors() {
        let mut c = Cursor::new(&[1, 2, 3]);
        assert!(c.u32().is_err());
        assert_eq!(c.position(), 0, "a failed read consumes nothing");
        assert_eq!(c.take(3).unwrap(), &[1, 2, 3]);
        assert!(c.take(1).is_err());
        assert!(c.is_empty());
    }

    #[test]
    fn scalars_are_big_endian() {
        let mut c = Cursor::new(&[0x46, 0x47, 0x46, 0x53, 0x3f, 0x80, 0, 0]);
        assert_eq!(c.u32().unwrap(), crate::MAGIC_CLIENT);
        assert_eq!(c.f32().unwrap(), 1.0);
        assert_eq!(u32_at(&[0, 0, 0, 7], 0), Some(7));
        assert_eq!(u32_at(&[0, 0, 7], 0), None);
        assert_eq!(u32_at(&[0, 0, 7], usize::MAX), None);
    }
}
