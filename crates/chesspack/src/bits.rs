//! Bit strings of exact length, and MSB-first bit writers and readers.
//!
//! Every codec in this crate produces a [`Bits`]: a byte buffer plus the exact
//! number of meaningful bits, so that statistics count bits, not bytes, and
//! containers can pack streams without padding.

use std::fmt;

use crate::Error;

/// A string of bits of exact length, stored most significant bit first.
///
/// ```
/// use chesspack::Bits;
///
/// let bits = Bits::from_hex("a0", 3).unwrap();
/// assert_eq!(bits.len(), 3);
/// assert_eq!(bits.to_hex(), "a0");
/// assert_eq!((bits.get(0), bits.get(1), bits.get(3)), (Some(true), Some(false), None));
/// ```
#[derive(Clone, PartialEq, Eq, Hash, Default)]
pub struct Bits {
    bytes: Vec<u8>,
    len: usize,
}

impl Bits {
    /// Wraps `bytes`, of which the first `len` bits are meaningful.
    ///
    /// Bits past `len` in the last byte are cleared, so that equal bit strings
    /// compare equal.
    ///
    /// ```
    /// use chesspack::Bits;
    ///
    /// let bits = Bits::from_bytes(vec![0xff, 0xff], 9).unwrap();
    /// assert_eq!(bits.as_bytes(), &[0xff, 0x80]);
    /// assert!(Bits::from_bytes(vec![0], 9).is_err());
    /// ```
    pub fn from_bytes(mut bytes: Vec<u8>, len: usize) -> Result<Bits, Error> {
        if len > bytes.len() * 8 {
            return Err(Error::Truncated);
        }
        bytes.truncate(len.div_ceil(8));
        if !len.is_multiple_of(8) {
            let last = bytes.len() - 1;
            bytes[last] &= 0xff << (8 - len % 8);
        }
        Ok(Bits { bytes, len })
    }

    /// Wraps whole bytes: `8 * bytes.len()` bits.
    pub(crate) fn from_whole_bytes(bytes: Vec<u8>) -> Bits {
        let len = bytes.len() * 8;
        Bits { bytes, len }
    }

    /// Parses a hex string holding `len` bits (padding bits must be zero or
    /// are cleared).
    ///
    /// ```
    /// use chesspack::Bits;
    ///
    /// assert_eq!(Bits::from_hex("ff", 4).unwrap().to_hex(), "f0");
    /// assert!(Bits::from_hex("zz", 4).is_err());
    /// ```
    pub fn from_hex(hex: &str, len: usize) -> Result<Bits, Error> {
        let hex = hex.trim();
        if !hex.len().is_multiple_of(2) {
            return Err(Error::InvalidData("odd number of hex digits".into()));
        }
        let bytes = (0..hex.len())
            .step_by(2)
            .map(|i| {
                hex.get(i..i + 2)
                    .and_then(|d| u8::from_str_radix(d, 16).ok())
                    .ok_or_else(|| Error::InvalidData("invalid hex digit".into()))
            })
            .collect::<Result<Vec<u8>, Error>>()?;
        Bits::from_bytes(bytes, len)
    }

    /// The number of bits.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the string holds no bits.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The bytes, with the last one padded by zero bits.
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// Lower-case hex of the bytes (padding bits are zero).
    pub fn to_hex(&self) -> String {
        use fmt::Write;
        let mut s = String::with_capacity(self.bytes.len() * 2);
        for b in &self.bytes {
            let _ = write!(s, "{b:02x}");
        }
        s
    }

    /// Bit `i` (0 is the first, most significant one), or `None` past the end.
    pub fn get(&self, i: usize) -> Option<bool> {
        (i < self.len).then(|| self.bytes[i / 8] & (0x80 >> (i % 8)) != 0)
    }

    /// A reader positioned at the first bit.
    pub(crate) fn reader(&self) -> BitReader<'_> {
        BitReader::new(self)
    }
}

impl fmt::Debug for Bits {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Bits({}, 0x{})", self.len, self.to_hex())
    }
}

/// Appends bits, most significant first.
#[derive(Clone, Debug, Default)]
pub(crate) struct BitWriter {
    bytes: Vec<u8>,
    len: usize,
}

impl BitWriter {
    /// An empty writer.
    pub(crate) fn new() -> BitWriter {
        BitWriter::default()
    }

    /// The number of bits written so far.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Writes one bit.
    pub(crate) fn write_bit(&mut self, bit: bool) {
        if self.len.is_multiple_of(8) {
            self.bytes.push(0);
        }
        if bit {
            let last = self.bytes.len() - 1;
            self.bytes[last] |= 0x80 >> (self.len % 8);
        }
        self.len += 1;
    }

    /// Writes the low `n` bits of `value` (`n` ≤ 64), most significant first.
    pub(crate) fn write(&mut self, value: u64, n: u32) {
        debug_assert!(n <= 64);
        // Up to a byte at a time: fill the last byte, then whole bytes.
        let mut n = n;
        while n > 0 {
            let used = (self.len % 8) as u32;
            if used == 0 {
                self.bytes.push(0);
            }
            let room = 8 - used;
            let take = room.min(n);
            let chunk = ((value >> (n - take)) & ((1u64 << take) - 1)) as u8;
            if let Some(last) = self.bytes.last_mut() {
                *last |= chunk << (room - take);
            }
            self.len += take as usize;
            n -= take;
        }
    }

    /// Writes `value` in `0..n` with a truncated binary code: values below
    /// `2^k - n` take `k - 1` bits, the others `k` bits, where `k = ceil(log2 n)`.
    /// Nothing is written when `n` ≤ 1.
    pub(crate) fn write_truncated(&mut self, value: u64, n: u64) {
        debug_assert!(value < n.max(1));
        if n <= 1 {
            return;
        }
        let k = ceil_log2(n);
        let short = (1u64 << k) - n;
        if value < short {
            self.write(value, k - 1);
        } else {
            self.write(value + short, k);
        }
    }

    /// Writes `value` ≥ 1 with the Elias gamma code (`2⌊log2 v⌋ + 1` bits).
    pub(crate) fn write_gamma(&mut self, value: u64) {
        debug_assert!(value >= 1);
        let n = 63 - value.leading_zeros();
        self.write(0, n);
        self.write(value, n + 1);
    }

    /// Appends all of `bits`.
    pub(crate) fn write_bits(&mut self, bits: &Bits) {
        // A byte at a time; the last byte's unused bits are zero.
        let full = bits.len() / 8;
        if self.len.is_multiple_of(8) {
            self.bytes.extend_from_slice(&bits.as_bytes()[..full]);
            self.len += full * 8;
        } else {
            for &b in &bits.as_bytes()[..full] {
                self.write(u64::from(b), 8);
            }
        }
        let rest = (bits.len() % 8) as u32;
        if rest > 0 {
            self.write(u64::from(bits.as_bytes()[full] >> (8 - rest)), rest);
        }
    }

    /// The bits written.
    /// Writes zero bits up to the next whole byte.
    pub(crate) fn align(&mut self) {
        while !self.len().is_multiple_of(8) {
            self.write_bit(false);
        }
    }

    pub(crate) fn finish(self) -> Bits {
        Bits {
            bytes: self.bytes,
            len: self.len,
        }
    }
}

/// Reads bits written by a [`BitWriter`]; reading past the end is
/// [`Error::Truncated`].
#[derive(Clone, Debug)]
pub(crate) struct BitReader<'a> {
    bits: &'a Bits,
    pos: usize,
}

impl<'a> BitReader<'a> {
    /// A reader at the first bit of `bits`.
    pub(crate) fn new(bits: &'a Bits) -> BitReader<'a> {
        BitReader { bits, pos: 0 }
    }

    /// Bits left.
    pub(crate) fn remaining(&self) -> usize {
        self.bits.len() - self.pos
    }

    /// Reads one bit.
    pub(crate) fn read_bit(&mut self) -> Result<bool, Error> {
        let bit = self.bits.get(self.pos).ok_or(Error::Truncated)?;
        self.pos += 1;
        Ok(bit)
    }

    /// Reads `n` ≤ 64 bits as an unsigned number.
    pub(crate) fn read(&mut self, n: u32) -> Result<u64, Error> {
        if n as usize > self.remaining() || n > 64 {
            return Err(Error::Truncated);
        }
        let mut v = 0u64;
        for _ in 0..n {
            v = (v << 1) | u64::from(self.read_bit()?);
        }
        Ok(v)
    }

    /// Reads a value in `0..n` written by [`BitWriter::write_truncated`].
    pub(crate) fn read_truncated(&mut self, n: u64) -> Result<u64, Error> {
        if n <= 1 {
            return Ok(0);
        }
        let k = ceil_log2(n);
        let short = (1u64 << k) - n;
        let v = self.read(k - 1)?;
        if v < short {
            Ok(v)
        } else {
            let v = (v << 1) | u64::from(self.read_bit()?);
            Ok(v - short)
        }
    }

    /// Reads an Elias gamma code.
    pub(crate) fn read_gamma(&mut self) -> Result<u64, Error> {
        let mut zeros = 0;
        while !self.read_bit()? {
            zeros += 1;
            if zeros > 63 {
                return Err(Error::InvalidData("elias gamma code too long".into()));
            }
        }
        Ok((1u64 << zeros) | self.read(zeros)?)
    }
}

/// `ceil(log2 n)` for `n` ≥ 1: the bits of a fixed-width index among `n` values.
pub(crate) fn ceil_log2(n: u64) -> u32 {
    if n <= 1 {
        0
    } else {
        64 - (n - 1).leading_zeros()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `write_bits` appends exactly the bits, at any bit offset.
    #[test]
    fn write_bits_appends_bits() {
        for offset in 0..9u32 {
            for len in [0usize, 1, 7, 8, 9, 23, 64] {
                let mut src = BitWriter::new();
                for i in 0..len {
                    src.write_bit((i * 7 + 3) % 5 < 2);
                }
                let src = src.finish();
                let mut w = BitWriter::new();
                w.write(0b1_0110_1011, offset);
                w.write_bits(&src);
                let out = w.finish();
                assert_eq!(out.len(), offset as usize + len);
                for i in 0..len {
                    assert_eq!(
                        out.get(offset as usize + i),
                        src.get(i),
                        "{offset} {len} {i}"
                    );
                }
            }
        }
    }

    #[test]
    fn codes_round_trip() {
        let mut w = BitWriter::new();
        for v in 1..300u64 {
            w.write_gamma(v);
            w.write_truncated(v % 7, 7);
            w.write_truncated(v, 300);
        }
        let bits = w.finish();
        let mut r = bits.reader();
        for v in 1..300u64 {
            assert_eq!(r.read_gamma().unwrap(), v);
            assert_eq!(r.read_truncated(7).unwrap(), v % 7);
            assert_eq!(r.read_truncated(300).unwrap(), v);
        }
        assert_eq!(r.remaining(), 0);
        assert!(matches!(r.read_bit(), Err(Error::Truncated)));
    }

    #[test]
    fn garbage_never_panics() {
        let bits = Bits::from_whole_bytes(vec![0; 20]);
        assert!(bits.reader().read_gamma().is_err());
    }
}

/// The examples of crate-private items, run as unit tests.
#[cfg(test)]
mod examples {
    #[test]
    fn example_from_whole_bytes() {
        assert_eq!(crate::Bits::from_whole_bytes(vec![1, 2]).len(), 16);
    }

    #[test]
    fn example_bitwriter() {
        use crate::bits::BitWriter;

        let mut w = BitWriter::new();
        w.write_bit(true);
        w.write(0, 7);
        w.write(0xabcd, 16);
        assert_eq!(w.finish().as_bytes(), &[0x80, 0xab, 0xcd]);
    }

    #[test]
    fn example_bitwriter_write_truncated() {
        use crate::bits::BitWriter;

        let mut w = BitWriter::new();
        w.write_truncated(0, 3); // 1 bit
        w.write_truncated(2, 3); // 2 bits
        w.write_truncated(0, 1); // 0 bits
        assert_eq!(w.len(), 3);
    }

    #[test]
    fn example_ceil_log2() {
        assert_eq!(crate::bits::ceil_log2(1), 0);
        assert_eq!(crate::bits::ceil_log2(20), 5);
        assert_eq!(crate::bits::ceil_log2(256), 8);
        assert_eq!(crate::bits::ceil_log2(257), 9);
    }
}
