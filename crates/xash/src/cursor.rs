//! A little-endian reader that never reads past its buffer, and writer helpers.

use crate::Error;

/// Reads fields in order; every read is bounds-checked.
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

    /// Bytes left.
    pub fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    /// The unread rest, consumed.
    pub fn rest(&mut self) -> &'a [u8] {
        let r = &self.buf[self.pos..];
        self.pos = self.buf.len();
        r
    }

    /// The unread rest, not consumed.
    pub fn peek_rest(&self) -> &'a [u8] {
        &self.buf[self.pos..]
    }

    /// Takes `n` bytes.
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

    /// Consumes `prefix` or fails with [`Error::WrongHeader`] without consuming.
    pub fn expect(&mut self, prefix: &[u8]) -> Result<(), Error> {
        if self.peek_rest().starts_with(prefix) {
            self.pos += prefix.len();
            Ok(())
        } else {
            Err(Error::WrongHeader)
        }
    }

    /// Takes exactly `N` bytes.
    pub fn array<const N: usize>(&mut self) -> Result<[u8; N], Error> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.take(N)?);
        Ok(a)
    }

    /// u8.
    pub fn u8(&mut self) -> Result<u8, Error> {
        Ok(self.take(1)?[0])
    }

    /// Little-endian u16.
    pub fn u16(&mut self) -> Result<u16, Error> {
        Ok(u16::from_le_bytes(self.array()?))
    }

    /// Big-endian u16 (ports in server lists).
    pub fn u16_be(&mut self) -> Result<u16, Error> {
        Ok(u16::from_be_bytes(self.array()?))
    }

    /// Little-endian u32.
    pub fn u32(&mut self) -> Result<u32, Error> {
        Ok(u32::from_le_bytes(self.array()?))
    }

    /// Little-endian i32.
    pub fn i32(&mut self) -> Result<i32, Error> {
        Ok(i32::from_le_bytes(self.array()?))
    }

    /// Little-endian f32.
    pub fn f32(&mut self) -> Result<f32, Error> {
        Ok(f32::from_le_bytes(self.array()?))
    }

    /// A NUL-terminated string (the NUL is consumed, not returned).
    pub fn cstr(&mut self) -> Result<&'a [u8], Error> {
        let rest = self.peek_rest();
        let n = rest
            .iter()
            .position(|&b| b == 0)
            .ok_or(Error::Unterminated(self.pos))?;
        let s = &rest[..n];
        self.pos += n + 1;
        Ok(s)
    }

    /// Fails unless everything was read.
    pub fn finish(&self) -> Result<(), Error> {
        match self.remaining() {
            0 => Ok(()),
            n => Err(Error::Trailing(n)),
        }
    }
}

/// Appends a NUL-terminated string.
pub fn put_cstr(out: &mut Vec<u8>, s: &[u8]) {
    out.extend_from_slice(s);
    out.push(0);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_and_strings() {
        let mut c = Cursor::new(b"ab\0\x01\x02");
        assert_eq!(c.cstr().unwrap(), b"ab");
        assert_eq!(c.u16().unwrap(), 0x0201);
        assert!(c.u8().is_err());
        assert!(c.finish().is_ok());
        let mut c = Cursor::new(b"abc");
        assert_eq!(c.cstr(), Err(Error::Unterminated(0)));
        assert_eq!(c.position(), 0);
        assert_eq!(c.expect(b"x"), Err(Error::WrongHeader));
    }
}
