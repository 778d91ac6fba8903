//! NUL-terminated framing: every tracker message, in both directions, is a string
//! followed by one `\0` (fgms `write_str(str, len + 1)`, fgtracker `explode("\0")`).
//!
//! A frame is kept as raw bytes: the tracker ignores lines that are not valid UTF-8
//! one by one, so decoding is left to whoever reads the frame.

use std::collections::VecDeque;
use std::fmt;

/// Why a frame could not be delivered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameError {
    /// More than the framer's `max_frame` bytes arrived without a `\0`. The bytes are
    /// dropped up to the next `\0`, so memory stays bounded whatever the peer sends;
    /// callers close the connection.
    TooLong {
        /// The limit that was passed.
        max: usize,
    },
}

impl fmt::Display for FrameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FrameError::TooLong { max } => write!(f, "frame longer than {max} bytes"),
        }
    }
}

impl std::error::Error for FrameError {}

/// Splits a byte stream into NUL-terminated frames.
///
/// Frames are cut as soon as bytes are pushed, so the unfinished frame it holds never
/// exceeds `max_frame` bytes; completed frames wait in order until
/// [`Framer::next_frame`] takes them (callers drain after every push).
#[derive(Debug)]
pub struct Framer {
    max_frame: usize,
    partial: Vec<u8>,
    /// Dropping an over-long frame up to its `\0` (its error was already reported).
    discarding: bool,
    ready: VecDeque<Result<Vec<u8>, FrameError>>,
}

impl Framer {
    /// A framer that refuses frames longer than `max_frame` bytes (the `\0` excluded).
    pub fn new(max_frame: usize) -> Framer {
        Framer {
            max_frame,
            partial: Vec::new(),
            discarding: false,
            ready: VecDeque::new(),
        }
    }

    /// Changes the longest frame accepted from now on (a frame already longer is
    /// refused when its end comes).
    pub fn set_max(&mut self, max_frame: usize) {
        self.max_frame = max_frame;
    }

    /// Takes bytes as they came off the socket, split anywhere.
    pub fn push(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            match bytes.iter().position(|&b| b == 0) {
                Some(end) => {
                    let segment = &bytes[..end];
                    bytes = &bytes[end + 1..];
                    if self.discarding {
                        // The end of a frame already reported as too long.
                        self.discarding = false;
                    } else if self.partial.len().saturating_add(segment.len()) > self.max_frame {
                        self.partial = Vec::new();
                        self.ready.push_back(Err(self.too_long()));
                    } else {
                        let mut frame = std::mem::take(&mut self.partial);
                        frame.extend_from_slice(segment);
                        self.ready.push_back(Ok(frame));
                    }
                }
                None => {
                    if !self.discarding {
                        if self.partial.len().saturating_add(bytes.len()) > self.max_frame {
                            // Report now, not at the `\0` that may never come.
                            self.partial = Vec::new();
                            self.discarding = true;
                            self.ready.push_back(Err(self.too_long()));
                        } else {
                            self.partial.reserve_exact(bytes.len());
                            self.partial.extend_from_slice(bytes);
                        }
                    }
                    break;
                }
            }
        }
    }

    /// The next complete frame (without its `\0`), or the error that replaced an
    /// over-long one; `None` when no complete frame is waiting.
    pub fn next_frame(&mut self) -> Option<Result<Vec<u8>, FrameError>> {
        self.ready.pop_front()
    }

    /// Bytes of the unfinished frame held (never more than `max_frame`).
    pub fn buffered(&self) -> usize {
        self.partial.len()
    }

    /// Complete frames (and errors) waiting for [`Framer::next_frame`].
    pub fn waiting(&self) -> usize {
        self.ready.len()
    }

    fn too_long(&self) -> FrameError {
        FrameError::TooLong {
            max: self.max_frame,
        }
    }
}

/// Appends `text` and its terminating `\0` to `out`.
///
/// A `\0` inside `text` would end the frame early and turn the rest into a second
/// message, so it is written as `_`; the callers in this crate never produce one.
pub fn frame(text: &str, out: &mut Vec<u8>) {
    out.reserve(text.len() + 1);
    out.extend(text.bytes().map(|b| if b == 0 { b'_' } else { b }));
    out.push(0);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frames(f: &mut Framer) -> Vec<Result<Vec<u8>, FrameError>> {
        std::iter::from_fn(|| f.next_frame()).collect()
    }

    #[test]
    fn splits_on_nul_across_pushes() {
        let mut f = Framer::new(16);
        f.push(b"\0V2015");
        f.push(b"1207 a b c\0OK\0PI");
        assert_eq!(
            frames(&mut f),
            vec![
                Ok(b"".to_vec()),
                Ok(b"V20151207 a b c".to_vec()),
                Ok(b"OK".to_vec())
            ]
        );
        assert_eq!(f.buffered(), 2);
        f.push(b"NG\0");
        assert_eq!(frames(&mut f), vec![Ok(b"PING".to_vec())]);
        assert_eq!(f.buffered(), 0);
    }

    #[test]
    fn too_long_is_reported_once_and_resyncs_after_the_nul() {
        let mut f = Framer::new(4);
        f.push(b"12345");
        assert_eq!(frames(&mut f), vec![Err(FrameError::TooLong { max: 4 })]);
        assert_eq!(f.buffered(), 0);
        f.push(b"6789");
        f.push(b"0\0OK\0");
        assert_eq!(frames(&mut f), vec![Ok(b"OK".to_vec())]);
    }

    #[test]
    fn a_frame_of_exactly_max_passes() {
        let mut f = Framer::new(4);
        f.push(b"1234");
        assert!(frames(&mut f).is_empty());
        f.push(b"\0");
        assert_eq!(frames(&mut f), vec![Ok(b"1234".to_vec())]);
        f.push(b"12345\0");
        assert_eq!(frames(&mut f), vec![Err(FrameError::TooLong { max: 4 })]);
    }

    #[test]
    fn frame_appends_a_nul_and_never_embeds_one() {
        let mut out = Vec::new();
        frame("OK", &mut out);
        frame("", &mut out);
        frame("a\0b", &mut out);
        assert_eq!(out, b"OK\0\0a_b\0");
    }
}
