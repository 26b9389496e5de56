//! The range coder: [`Encoder`] and [`Decoder`], constriction's words with
//! a shortest end.

use super::{PRECISION, quantize::Model};
use crate::{Bits, Error};

/// A range encoder.
///
/// It writes the streams of constriction's `DefaultRangeEncoder` (32-bit
/// words, a 64-bit state, 24-bit probabilities; a unit test checks the bytes
/// against it) up to the end, which [`Encoder::finish`] makes as short as
/// it can. A carry out of the state is added into the bytes already
/// written, where constriction holds words back until it knows them; the
/// words are the same, and the encoder is small enough to inline into the
/// codecs' loops.
#[derive(Debug)]
pub(crate) struct Encoder<const ENDS: bool = false> {
    bytes: Vec<u8>,
    lower: u64,
    /// At least `1 << 32` between symbols.
    range: u64,
    /// The points that end the message at the places it went on past (see
    /// [`Encoder::pass_end`]) and that lie in the range, as offsets above
    /// `lower`.
    passed: Vec<u64>,
}

impl<const ENDS: bool> Default for Encoder<ENDS> {
    fn default() -> Encoder<ENDS> {
        Encoder {
            // A position's stream, with room for the end.
            bytes: Vec::with_capacity(16),
            lower: 0,
            range: u64::MAX,
            passed: Vec::new(),
        }
    }
}

impl Encoder {
    /// An empty encoder.
    pub(crate) fn new() -> Encoder {
        Encoder::default()
    }
}

impl Encoder<true> {
    /// An empty encoder of a message whose end its stream's length marks
    /// (see [`Encoder::pass_end`]).
    pub(crate) fn with_ends() -> Encoder<true> {
        Encoder::default()
    }

    /// Records that the message goes on at a place where it could have
    /// ended: a decoder that asks [`Decoder::at_end`] at the same places
    /// (between the same symbols) goes on there.
    ///
    /// Together with [`Encoder::finish_at_end`] this ends a message by the
    /// length of its stream, instead of an end symbol that every place pays
    /// for: each place where the message could end gets its own point of
    /// the range coder's interval there, the one with the most trailing
    /// zero bits (the shortest stream) that no earlier place on the way has
    /// taken, and a stream ends at the first place whose point it is.
    pub(crate) fn pass_end(&mut self) {
        let point = end_point(self.lower, self.range, &self.passed);
        self.passed.push(point);
    }

    /// Ends the stream at a place where the message may end, with the point
    /// of this place (see [`Encoder::pass_end`]): a decoder that asks
    /// [`Decoder::at_end`] at the same places stops here. At most a few
    /// bits longer than [`Encoder::finish`].
    pub(crate) fn finish_at_end(mut self) -> Bits {
        let offset = end_point(self.lower, self.range, &self.passed);
        let point = u128::from(self.lower) + u128::from(offset);
        if point >> 64 != 0 {
            add_carry(&mut self.bytes);
        }
        self.bytes.extend_from_slice(&(point as u64).to_be_bytes());
        trim_trailing_zeros(self.bytes)
    }
}

impl<const ENDS: bool> Encoder<ENDS> {
    /// Encodes `symbol` with `model`.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidData`] when `symbol` is out of the model's range.
    pub(crate) fn encode(&mut self, symbol: usize, model: &Model) -> Result<(), Error> {
        if symbol >= model.len() {
            return Err(Error::InvalidData(format!("symbol {symbol} out of range")));
        }
        self.narrow(model.cdf[symbol], model.frequency(symbol));
        Ok(())
    }

    /// Encodes `symbol` with frequencies as [`quantize_fast`](super::quantize_fast) makes them
    /// (each ≥ 1, summing to `1 << 24`).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidData`] when `symbol` is out of range or its
    /// frequency is 0.
    #[inline]
    pub(crate) fn encode_frequencies(&mut self, symbol: usize, freqs: &[u32]) -> Result<(), Error> {
        let Some(&freq) = freqs.get(symbol) else {
            return Err(Error::InvalidData(format!("symbol {symbol} out of range")));
        };
        self.encode_interval(freqs[..symbol].iter().sum(), freq)
    }

    /// Encodes a symbol of two with the frequencies `[zero, (1 << 24) −
    /// zero]`, as [`Decoder::decode_bit`] reads it, for a caller whose
    /// `zero` is in `1..1 << 24` by construction (a table of such
    /// frequencies).
    #[inline(always)]
    pub(crate) fn encode_bit_unchecked(&mut self, bit: bool, zero: u32) {
        debug_assert!(zero > 0 && zero < 1 << PRECISION);
        if bit {
            self.narrow(zero, (1 << PRECISION) - zero);
        } else {
            self.narrow(0, zero);
        }
    }

    /// Encodes a symbol by its interval: the sum of the frequencies before
    /// it and its own (as [`Encoder::encode_frequencies`] would compute
    /// them), so that a caller can work out intervals before it knows how
    /// the stream starts.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidData`] for an empty interval or one past `1 << 24`.
    #[inline(always)]
    pub(crate) fn encode_interval(&mut self, left: u32, freq: u32) -> Result<(), Error> {
        if freq == 0 || u64::from(left) + u64::from(freq) > 1 << PRECISION {
            return Err(Error::InvalidData("bad interval".into()));
        }
        self.narrow(left, freq);
        Ok(())
    }

    /// Narrows the range to the interval `[left, left + freq)` of `1 << 24`
    /// (not empty, not past the end).
    #[inline(always)]
    fn narrow(&mut self, left: u32, freq: u32) {
        let scale = self.range >> PRECISION;
        self.range = scale * u64::from(freq);
        if ENDS && !self.passed.is_empty() {
            narrow_passed(&mut self.passed, scale * u64::from(left), self.range);
        }
        let (lower, carry) = self.lower.overflowing_add(scale * u64::from(left));
        self.lower = lower;
        if carry {
            add_carry(&mut self.bytes);
        }
        if self.range < 1 << 32 {
            self.bytes
                .extend_from_slice(&((self.lower >> 32) as u32).to_be_bytes());
            self.lower <<= 32;
            self.range <<= 32;
        }
    }

    /// Ends the stream with the fewest bits that identify it: the point of
    /// the final range with the most trailing zeros (the decoder reads
    /// missing bits as zeros).
    pub(crate) fn finish(mut self) -> Bits {
        if self.range != u64::MAX {
            // The range may reach past 2^64: the point then carries.
            let upper = u128::from(self.lower) + u128::from(self.range) - 1;
            let point = shortest_point(u128::from(self.lower), upper);
            if point >> 64 != 0 {
                add_carry(&mut self.bytes);
            }
            self.bytes.extend_from_slice(&(point as u64).to_be_bytes());
        }
        trim_trailing_zeros(self.bytes)
    }
}

/// Moves the points in `passed` (offsets above the range's lower end) into
/// the range narrowed to `[offset, offset + width)` of it, dropping those
/// outside, and scales them as the range is scaled when it gets narrower
/// than `1 << 32`.
#[inline(never)]
fn narrow_passed(passed: &mut Vec<u64>, offset: u64, width: u64) {
    passed.retain_mut(|p| {
        if *p < offset || *p - offset >= width {
            return false;
        }
        *p -= offset;
        if width < 1 << 32 {
            *p <<= 32;
        }
        true
    });
}

/// The point that ends a message in the range `[lower, lower + range)`:
/// the one with the most trailing zero bits, the lowest of those, that is
/// not in `passed` (points of earlier places, as offsets above `lower`);
/// as an offset above `lower`.
fn end_point(lower: u64, range: u64, passed: &[u64]) -> u64 {
    let lo = u128::from(lower);
    let hi = lo + u128::from(range) - 1;
    let first = shortest_point(lo, hi);
    if !passed.contains(&((first - lo) as u64)) {
        return (first - lo) as u64;
    }
    // Points with fewer trailing zeros, most first: the odd multiples of
    // 2^b in the range, lowest first. The range holds at least 2^32 points
    // and `passed` fewer, so this ends.
    let mut b = if first == 0 {
        64
    } else {
        first.trailing_zeros()
    };
    loop {
        b -= 1;
        let step = 1u128 << b;
        let mut v = (lo + step - 1) >> b << b;
        if (v >> b) & 1 == 0 {
            v += step;
        }
        while v <= hi {
            if !passed.contains(&((v - lo) as u64)) {
                return (v - lo) as u64;
            }
            v += 2 * step;
        }
    }
}

/// Adds one to the number whose big-endian bytes are `bytes` (a carry out
/// of the encoder's state; the stream never overflows, since the value
/// stays below the first range's end).
#[inline(never)]
fn add_carry(bytes: &mut [u8]) {
    for b in bytes.iter_mut().rev() {
        *b = b.wrapping_add(1);
        if *b != 0 {
            break;
        }
    }
}

/// The value in `[lower, upper]` with the most trailing zero bits: `upper`
/// cut below the highest bit where it differs from `lower - 1` (0 when
/// `lower` is 0; no multiple of a larger power of two lies above
/// `lower - 1` in the block of `upper`).
fn shortest_point(lower: u128, upper: u128) -> u128 {
    match lower.checked_sub(1) {
        None => 0,
        Some(below) => {
            let b = 127 - (below ^ upper).leading_zeros();
            upper & !((1u128 << b) - 1)
        }
    }
}

/// The bits of `bytes` up to the last 1 bit.
fn trim_trailing_zeros(bytes: Vec<u8>) -> Bits {
    let len = match bytes.iter().rposition(|&b| b != 0) {
        Some(i) => i * 8 + 8 - bytes[i].trailing_zeros() as usize,
        None => 0,
    };
    Bits::from_bytes(bytes, len).unwrap_or_default()
}

/// A range decoder; bits past the end of the stream read as zeros.
///
/// It reads exactly what constriction's `DefaultRangeDecoder` reads (32-bit
/// words, most significant byte first, a 64-bit state, 24-bit
/// probabilities; a unit test runs both on the same streams), but finds a
/// symbol by comparing the point against the scaled cumulative
/// frequencies instead of dividing it by the scale first: the symbol whose
/// interval `[c, c + f)` holds `⌊d / s⌋` is the one with `s·c ≤ d < s·(c + f)`.
/// A 64-bit division on the path from one decoded symbol to the next costs
/// more than the whole comparison for the models here (the position
/// decoder's occupancy bit, its 13 piece symbols).
#[derive(Debug)]
pub(crate) struct Decoder<'a, const ENDS: bool = false> {
    bytes: &'a [u8],
    /// The next 32-bit word to read.
    word: usize,
    lower: u64,
    /// At least `1 << 32` between symbols.
    range: u64,
    /// Invariant: `point − lower < range` (wrapping).
    point: u64,
    /// The stream's length up to its last 1 bit.
    end_bits: usize,
    /// As [`Encoder`]'s: the end points of the places passed.
    passed: Vec<u64>,
}

impl<'a> Decoder<'a> {
    /// A decoder over `bits`.
    pub(crate) fn new(bits: &'a Bits) -> Decoder<'a> {
        Decoder::over(bits)
    }
}

impl<'a> Decoder<'a, true> {
    /// A decoder over `bits` of a message whose end the stream's length
    /// marks (see [`Encoder::pass_end`]).
    pub(crate) fn with_ends(bits: &'a Bits) -> Decoder<'a, true> {
        Decoder::over(bits)
    }

    /// Whether the message ends here, at a place where the encoder called
    /// [`Encoder::pass_end`] or [`Encoder::finish_at_end`]: the stream is
    /// this place's end point. When not, the place counts as passed.
    pub(crate) fn at_end(&mut self) -> bool {
        let point = end_point(self.lower, self.range, &self.passed);
        // The stream's bits all lie in the window, and they are the point.
        let here = self.end_bits <= 32 * self.word && self.point.wrapping_sub(self.lower) == point;
        if !here {
            self.passed.push(point);
        }
        here
    }
}

impl<'a, const ENDS: bool> Decoder<'a, ENDS> {
    fn over(bits: &'a Bits) -> Decoder<'a, ENDS> {
        let bytes = bits.as_bytes();
        let mut dec = Decoder {
            bytes,
            word: 0,
            lower: 0,
            range: u64::MAX,
            point: 0,
            // Only a decoder that looks for ends needs it.
            end_bits: if ENDS {
                bytes
                    .iter()
                    .rposition(|&b| b != 0)
                    .map_or(0, |i| i * 8 + 8 - bytes[i].trailing_zeros() as usize)
            } else {
                0
            },
            passed: Vec::new(),
        };
        let high = dec.next_word();
        dec.point = (u64::from(high) << 32) | u64::from(dec.next_word());
        dec
    }

    /// The next 32-bit word of the stream; a partial last word is padded
    /// with zeros, and words past the end are zero.
    #[inline]
    fn next_word(&mut self) -> u32 {
        let at = 4 * self.word;
        self.word += 1;
        match self.bytes.get(at..at + 4) {
            Some(w) => u32::from_be_bytes([w[0], w[1], w[2], w[3]]),
            None => {
                let mut b = [0u8; 4];
                if let Some(rest) = self.bytes.get(at..) {
                    b[..rest.len()].copy_from_slice(rest);
                }
                u32::from_be_bytes(b)
            }
        }
    }

    /// The scale (`range >> 24`) and the point's offset in the range.
    #[inline]
    fn scaled_point(&self) -> (u64, u64) {
        (self.range >> PRECISION, self.point.wrapping_sub(self.lower))
    }

    /// Narrows the range to the symbol whose scaled interval starts `left`
    /// above `lower` and is `width` wide, and reads a word when the range
    /// has shrunk below `1 << 32`.
    #[inline]
    fn narrow(&mut self, left: u64, width: u64) {
        if ENDS && !self.passed.is_empty() {
            narrow_passed(&mut self.passed, left, width);
        }
        self.lower = self.lower.wrapping_add(left);
        self.range = width;
        if self.range < 1 << 32 {
            self.lower <<= 32;
            self.range <<= 32;
            self.point = (self.point << 32) | u64::from(self.next_word());
        }
    }

    /// Decodes one symbol with `model`.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidData`] when the stream is not one that the encoder
    /// can produce.
    pub(crate) fn decode(&mut self, model: &Model) -> Result<usize, Error> {
        let (scale, point) = self.scaled_point();
        // The symbols whose interval starts at or below the point.
        let i = model
            .cdf
            .partition_point(|&c| scale * u64::from(c) <= point)
            - 1;
        if i >= model.len() {
            return Err(invalid_stream());
        }
        let left = scale * u64::from(model.cdf[i]);
        self.narrow(left, scale * u64::from(model.frequency(i)));
        Ok(i)
    }

    /// Decodes a symbol written by [`Encoder::encode_frequencies`] with the
    /// same frequencies (each ≥ 1, summing to `1 << 24`).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidData`] when the stream is not one that the encoder
    /// can produce.
    #[inline]
    pub(crate) fn decode_frequencies(&mut self, freqs: &[u32]) -> Result<usize, Error> {
        let (scale, point) = self.scaled_point();
        let mut left = 0u64;
        for (i, &f) in freqs.iter().enumerate() {
            // No overflow: scale < 2^40 and the cumulative sum ≤ 2^24.
            let width = scale * u64::from(f);
            if point < left + width {
                self.narrow(left, width);
                return Ok(i);
            }
            left += width;
        }
        Err(invalid_stream())
    }

    /// Decodes a symbol of two written by [`Encoder::encode_frequencies`]
    /// with the frequencies `[zero, (1 << 24) − zero]`: `false` for the
    /// first, `true` for the second. One multiplication and a comparison.
    ///
    /// ```
    /// use chesspack::coder::{Decoder, Encoder};
    ///
    /// let mut enc = Encoder::new();
    /// enc.encode_frequencies(1, &[1 << 20, (1 << 24) - (1 << 20)]).unwrap();
    /// enc.encode_frequencies(0, &[1 << 20, (1 << 24) - (1 << 20)]).unwrap();
    /// let bits = enc.finish();
    /// let mut dec = Decoder::new(&bits);
    /// assert!(dec.decode_bit(1 << 20).unwrap());
    /// assert!(!dec.decode_bit(1 << 20).unwrap());
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::InvalidData`] when `zero` is not in `1..1 << 24` or the
    /// stream is not one that the encoder can produce.
    #[cfg(test)]
    pub(crate) fn decode_bit(&mut self, zero: u32) -> Result<bool, Error> {
        if zero == 0 || zero >= 1 << PRECISION {
            return Err(Error::InvalidData("bad binary frequency".into()));
        }
        self.decode_bit_unchecked(zero)
    }

    /// [`Decoder::decode_bit`] for a caller whose `zero` is in `1..1 << 24`
    /// by construction (a table of such frequencies).
    #[inline(always)]
    pub(crate) fn decode_bit_unchecked(&mut self, zero: u32) -> Result<bool, Error> {
        debug_assert!(zero > 0 && zero < 1 << PRECISION);
        let (scale, point) = self.scaled_point();
        let split = scale * u64::from(zero);
        if point < split {
            self.narrow(0, split);
            Ok(false)
        } else if point < scale << PRECISION {
            self.narrow(split, (scale << PRECISION) - split);
            Ok(true)
        } else {
            Err(invalid_stream())
        }
    }

    /// Decodes a symbol of a model given by its quantile function:
    /// `find(q)` returns the symbol whose interval `[left, left + freq)`
    /// holds `q < 1 << 24`, with `left` and `freq` (the intervals of a model
    /// partition `0..1 << 24`). For models that find a symbol faster than
    /// they list every frequency.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidData`] when the stream is not one that the encoder
    /// can produce, or `find` returns an interval that does not hold `q`.
    pub(crate) fn decode_by(
        &mut self,
        find: impl Fn(u32) -> (usize, u32, u32),
    ) -> Result<usize, Error> {
        let (scale, point) = self.scaled_point();
        let q = point / scale;
        if q >= 1 << PRECISION {
            return Err(invalid_stream());
        }
        let (symbol, left, freq) = find(q as u32);
        let (left, freq) = (u64::from(left), u64::from(freq));
        if q < left || q >= left + freq || left + freq > 1 << PRECISION {
            return Err(Error::InvalidData(format!(
                "range coder: model interval [{left}, {}) misses {q}",
                left + freq
            )));
        }
        self.narrow(scale * left, scale * freq);
        Ok(symbol)
    }
}

/// The error for a point past the last symbol's interval: the encoder never
/// writes one.
fn invalid_stream() -> Error {
    Error::InvalidData("range coder: invalid compressed data".into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{coder::quantize, hash::xorshift};

    #[test]
    fn shortest_point_has_the_most_trailing_zeros() {
        let brute = |lower: u64, upper: u64| {
            (0..64u32)
                .rev()
                .map(|b| upper & !((1u64 << b) - 1))
                .find(|&v| v >= lower)
                .unwrap_or(upper)
        };
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for i in 0..20_000 {
            xorshift(&mut x);
            let lower = x >> (i % 64);
            let upper = lower.saturating_add(x.rotate_left(17) >> (i % 61));
            let want = if lower == 0 { 0 } else { brute(lower, upper) };
            let got = super::shortest_point(lower.into(), upper.into());
            assert_eq!(got, u128::from(want), "{lower} {upper}");
        }
    }

    /// Frequencies of symbols `0..n` (each ≥ 1, summing to `1 << 24`) as a
    /// constriction model, for its reference coders.
    #[derive(Clone, Copy, Debug)]
    struct Frequencies<'a>(&'a [u32]);

    impl constriction::stream::model::EntropyModel<24> for Frequencies<'_> {
        type Symbol = usize;
        type Probability = u32;
    }

    impl constriction::stream::model::EncoderModel<24> for Frequencies<'_> {
        fn left_cumulative_and_probability(
            &self,
            symbol: impl std::borrow::Borrow<usize>,
        ) -> Option<(u32, std::num::NonZeroU32)> {
            let s = *symbol.borrow();
            let p = std::num::NonZeroU32::new(*self.0.get(s)?)?;
            Some((self.0[..s].iter().sum(), p))
        }
    }

    impl constriction::stream::model::DecoderModel<24> for Frequencies<'_> {
        fn quantile_function(&self, quantile: u32) -> (usize, u32, std::num::NonZeroU32) {
            let mut left = 0u32;
            for (i, &f) in self.0.iter().enumerate() {
                if quantile < left + f || i + 1 == self.0.len() {
                    return (
                        i,
                        left,
                        std::num::NonZeroU32::new(f).unwrap_or(std::num::NonZeroU32::MIN),
                    );
                }
                left += f;
            }
            (0, 0, std::num::NonZeroU32::MIN)
        }
    }

    /// The encoder as it was on constriction's `DefaultRangeEncoder`, for
    /// the reference streams.
    fn reference_encode(symbols: &[(usize, &[u32])]) -> Vec<u8> {
        use constriction::stream::{
            Encode,
            queue::{DefaultRangeEncoder, EncoderSituation, RangeEncoder},
        };
        let mut enc = DefaultRangeEncoder::new();
        for &(s, f) in symbols {
            enc.encode_symbol(s, Frequencies(f)).unwrap();
        }
        let (bulk, state, situation) = enc.into_raw_parts();
        let lower = u128::from(state.lower());
        let upper = lower + u128::from(state.range().get()) - 1;
        let mut bytes: Vec<u8> = bulk.iter().flat_map(|w| w.to_be_bytes()).collect();
        if state.range().get() == u64::MAX {
            // Nothing was encoded.
        } else if matches!(situation, EncoderSituation::Normal) && upper <= u128::from(u64::MAX) {
            let point = shortest_point(lower, upper) as u64;
            bytes.extend_from_slice(&point.to_be_bytes());
        } else {
            let sealed = RangeEncoder::from_raw_parts(Vec::new(), state, situation)
                .into_compressed()
                .unwrap_or_default();
            bytes.extend(sealed.iter().flat_map(|w| w.to_be_bytes()));
        }
        let len = bytes.iter().rposition(|&b| b != 0).map_or(0, |i| i + 1);
        bytes.truncate(len);
        bytes
    }

    /// constriction's decoder over the same bytes, as the old `Decoder` read
    /// them.
    fn reference_decoder(bits: &Bits) -> constriction::stream::queue::DefaultRangeDecoder {
        let words: Vec<u32> = bits
            .as_bytes()
            .chunks(4)
            .map(|c| {
                let mut b = [0u8; 4];
                b[..c.len()].copy_from_slice(c);
                u32::from_be_bytes(b)
            })
            .collect();
        match constriction::stream::queue::DefaultRangeDecoder::from_compressed(words) {
            Ok(d) => d,
            Err(never) => match never {},
        }
    }

    /// Random frequencies for 1 to 20 symbols, skewed at times.
    fn random_freqs(x: &mut u64) -> Vec<u32> {
        let n = 1 + (xorshift(x) % 20) as usize;
        let weights: Vec<u64> = (0..n)
            .map(|_| {
                let r = xorshift(x);
                if r.is_multiple_of(3) {
                    r >> (r % 64)
                } else {
                    r % 1000
                }
            })
            .collect();
        quantize(&weights).unwrap()
    }

    /// One symbol by each of the decoder's three ways, chosen by `way`.
    fn decode_one(dec: &mut Decoder<'_>, freqs: &[u32], way: u64) -> Result<usize, Error> {
        match way % 3 {
            0 if freqs.len() == 2 => dec.decode_bit(freqs[0]).map(usize::from),
            1 => dec.decode_by(|q| {
                let mut left = 0;
                for (i, &f) in freqs.iter().enumerate() {
                    if q < left + f {
                        return (i, left, f);
                    }
                    left += f;
                }
                (freqs.len(), left, 1)
            }),
            _ => dec.decode_frequencies(freqs),
        }
    }

    #[test]
    fn decoder_reads_as_constriction_does() {
        use constriction::stream::Decode;
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let (mut symbols, mut errors) = (0, 0);
        for round in 0..3_000 {
            let models: Vec<Vec<u32>> = (0..1 + round % 60).map(|_| random_freqs(&mut x)).collect();
            // Streams the encoder wrote, and (every third round) random bytes.
            let bits = if round % 3 == 2 {
                // A point in the sliver of the range above `scale << 24`
                // (the first 40 bits set) is invalid from the first symbol.
                let sliver = if round % 2 == 0 { 5 } else { 0 };
                let bytes: Vec<u8> = (0..round % 23)
                    .map(|i| {
                        if i < sliver {
                            0xff
                        } else {
                            xorshift(&mut x) as u8
                        }
                    })
                    .collect();
                let len = 8 * bytes.len();
                Bits::from_bytes(bytes, len).unwrap()
            } else {
                let mut enc = Encoder::new();
                for f in &models {
                    enc.encode_frequencies(xorshift(&mut x) as usize % f.len(), f)
                        .unwrap();
                }
                enc.finish()
            };
            let mut ours = Decoder::new(&bits);
            let mut theirs = reference_decoder(&bits);
            for f in &models {
                let want = theirs.decode_symbol(Frequencies(f)).ok();
                let got = decode_one(&mut ours, f, xorshift(&mut x)).ok();
                assert_eq!(got, want, "round {round}");
                if want.is_none() {
                    errors += 1;
                    break;
                }
                symbols += 1;
            }
        }
        // Both outcomes were exercised.
        assert!(symbols > 50_000 && errors > 10, "{symbols} {errors}");
    }

    #[test]
    fn encoder_writes_constriction_words() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let (mut same, mut ends_differ) = (0, 0);
        for round in 0..3_000 {
            let models: Vec<Vec<u32>> = (0..round % 80).map(|_| random_freqs(&mut x)).collect();
            let symbols: Vec<(usize, &[u32])> = models
                .iter()
                .map(|f| (xorshift(&mut x) as usize % f.len(), f.as_slice()))
                .collect();
            let mut enc = Encoder::new();
            for &(s, f) in &symbols {
                enc.encode_frequencies(s, f).unwrap();
            }
            let ours = enc.finish();
            let theirs = reference_encode(&symbols);
            if ours.as_bytes() == theirs.as_slice() {
                same += 1;
            } else {
                // constriction ended an inverted or overflowing range with
                // its whole seal words: ours may end sooner, never later,
                // and every word before the last 8 bytes is the same.
                ends_differ += 1;
                assert!(ours.as_bytes().len() <= theirs.len(), "round {round}");
                let common = ours.as_bytes().len().saturating_sub(12);
                assert_eq!(ours.as_bytes()[..common], theirs[..common], "round {round}");
            }
            let mut dec = Decoder::new(&ours);
            for &(s, f) in &symbols {
                assert_eq!(dec.decode_frequencies(f).unwrap(), s, "round {round}");
            }
        }
        assert!(same > 2_500 && ends_differ < 200, "{same} {ends_differ}");
    }

    /// A step of a test message: whether a place where it could end comes
    /// first, then a symbol and its frequencies, or none.
    type Step = (bool, Option<(usize, Vec<u32>)>);

    /// Messages ended by the stream's length ([`Encoder::pass_end`],
    /// [`Encoder::finish_at_end`], [`Decoder::at_end`]) come back whole and
    /// no longer, with places that end or go on after symbols of any
    /// probability (near-certain ones make earlier places' points collide,
    /// several in a row), and places with no symbol between them; the end
    /// costs a few bits over [`Encoder::finish`].
    #[test]
    fn messages_end_where_their_stream_ends() {
        let mut x = 0x5851_f42d_4c95_7f2du64;
        let (mut extra, mut messages, mut collisions) = (0i64, 0i64, 0);
        for round in 0..6_000 {
            // Each step: whether a place comes first, then a symbol or none.
            let mut steps: Vec<Step> = Vec::new();
            for _ in 0..round % 70 {
                let f = if xorshift(&mut x).is_multiple_of(3) {
                    // Near certain: 1 − 2^-k for k up to 23.
                    let k = 1 + xorshift(&mut x) % 23;
                    vec![(1 << 24) - (1 << (24 - k)), 1 << (24 - k)]
                } else {
                    random_freqs(&mut x)
                };
                let s = if f.len() == 2 && f[0] > f[1] && !xorshift(&mut x).is_multiple_of(8) {
                    0
                } else {
                    xorshift(&mut x) as usize % f.len()
                };
                let symbol = (!xorshift(&mut x).is_multiple_of(5)).then_some((s, f));
                steps.push((!xorshift(&mut x).is_multiple_of(4), symbol));
            }
            let mut enc = Encoder::with_ends();
            let mut plain = Encoder::new();
            for (place, symbol) in &steps {
                if *place {
                    enc.pass_end();
                }
                if let Some((s, f)) = symbol {
                    enc.encode_frequencies(*s, f).unwrap();
                    plain.encode_frequencies(*s, f).unwrap();
                }
            }
            collisions += enc.passed.len();
            let bits = enc.finish_at_end();
            extra += bits.len() as i64 - plain.finish().len() as i64;
            messages += 1;
            let mut dec = Decoder::with_ends(&bits);
            for (i, (place, symbol)) in steps.iter().enumerate() {
                if *place {
                    assert!(!dec.at_end(), "round {round}: stopped at step {i}");
                }
                if let Some((s, f)) = symbol {
                    assert_eq!(dec.decode_frequencies(f).unwrap(), *s, "round {round}");
                }
            }
            assert!(dec.at_end(), "round {round}: went on past the end");
        }
        // Places whose points lay in the final range were exercised.
        assert!(collisions > 1_000, "{collisions}");
        let mean = extra as f64 / messages as f64;
        assert!(mean < 2.0, "{mean} bits more than finish");
    }

    #[test]
    fn tail_is_short() {
        // 100 symbols of probability 1/2 need 100 bits; allow a few more.
        let model = Model::from_weights(&[1, 1]).unwrap();
        let mut enc = Encoder::new();
        for i in 0..100 {
            enc.encode(i % 2, &model).unwrap();
        }
        let bits = enc.finish();
        assert!(bits.len() <= 102, "{} bits", bits.len());
        let mut dec = Decoder::new(&bits);
        for i in 0..100 {
            assert_eq!(dec.decode(&model).unwrap(), i % 2);
        }
    }

    #[test]
    fn skewed_models_round_trip() {
        let model = Model::from_weights(&[1_000_000, 1, 0, 7]).unwrap();
        for seed in 0..200u64 {
            let symbols: Vec<usize> = (0..50)
                .map(|i| ((seed * 31 + i * 7) % 13 % 4) as usize)
                .collect();
            let mut enc = Encoder::new();
            for &s in &symbols {
                enc.encode(s, &model).unwrap();
            }
            let bits = enc.finish();
            let mut dec = Decoder::new(&bits);
            let out: Vec<usize> = symbols
                .iter()
                .map(|_| dec.decode(&model).unwrap())
                .collect();
            assert_eq!(out, symbols);
        }
    }
}

/// The examples of crate-private items, run as unit tests.
#[cfg(test)]
mod examples {
    #[test]
    fn example_range_encoder_true_pass_end() {
        use crate::coder::{Decoder, Encoder, Model};

        let model = Model::from_weights(&[3, 1]).unwrap();
        let message = [0, 0, 1, 0];
        let mut enc = Encoder::with_ends();
        for &s in &message {
            enc.pass_end();
            enc.encode(s, &model).unwrap();
        }
        let bits = enc.finish_at_end();
        let mut dec = Decoder::with_ends(&bits);
        let mut out = Vec::new();
        while !dec.at_end() {
            out.push(dec.decode(&model).unwrap());
        }
        assert_eq!(out, message);
    }

    #[test]
    fn example_range_decoder_a_ends_decode_by() {
        use crate::coder::{Decoder, Encoder};

        let freqs = [1 << 22, 3 << 22];
        let mut enc = Encoder::new();
        enc.encode_frequencies(1, &freqs).unwrap();
        let bits = enc.finish();
        let mut dec = Decoder::new(&bits);
        let symbol = dec
            .decode_by(|q| {
                if q < 1 << 22 {
                    (0, 0, 1 << 22)
                } else {
                    (1, 1 << 22, 3 << 22)
                }
            })
            .unwrap();
        assert_eq!(symbol, 1);
    }
}
