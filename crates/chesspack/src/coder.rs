//! Range coding with integer probabilities, on top of constriction.
//!
//! Probabilities are 24-bit fixed point: every symbol's frequency is at least
//! 1 and they sum to exactly `1 << 24`. Encoding and decoding are integer-only
//! and therefore identical on every platform and build.
//!
//! The encoder ends its stream with as few bits as identify the final range
//! (the decoder reads missing bits as zeros), instead of constriction's one or
//! two whole 32-bit words, which matters for messages of a hundred bits.

use constriction::stream::{
    Decode, Encode,
    model::DefaultContiguousCategoricalEntropyModel,
    queue::{DefaultRangeDecoder, DefaultRangeEncoder, EncoderSituation, RangeEncoder},
};

use crate::{Bits, Error, bits::BitWriter};

/// Fixed-point precision of probabilities, in bits.
pub const PRECISION: u32 = 24;

/// A categorical distribution over symbols `0..n` with integer frequencies.
///
/// ```
/// use chesspack::coder::{Model, Encoder, Decoder};
///
/// let model = Model::from_weights(&[90, 9, 1]).unwrap();
/// let mut enc = Encoder::new();
/// for s in [0, 0, 1, 2, 0] {
///     enc.encode(s, &model).unwrap();
/// }
/// let bits = enc.finish();
/// let mut dec = Decoder::new(&bits);
/// let out: Vec<usize> = (0..5).map(|_| dec.decode(&model).unwrap()).collect();
/// assert_eq!(out, [0, 0, 1, 2, 0]);
/// ```
#[derive(Clone, Debug)]
pub struct Model {
    inner: DefaultContiguousCategoricalEntropyModel,
    freqs: Vec<u32>,
}

impl Model {
    /// A model whose frequencies are `weights` scaled to sum to `1 << 24`,
    /// each at least 1 (integer arithmetic only).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidData`] when there are no weights or more than `1 << 24`.
    pub fn from_weights(weights: &[u64]) -> Result<Model, Error> {
        Model::from_frequencies(quantize(weights)?)
    }

    /// A model from frequencies that are all ≥ 1 and sum to `1 << 24`.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidData`] when they do not.
    pub fn from_frequencies(freqs: Vec<u32>) -> Result<Model, Error> {
        if freqs.is_empty()
            || freqs.contains(&0)
            || freqs.iter().map(|&f| u64::from(f)).sum::<u64>() != 1 << PRECISION
        {
            return Err(Error::InvalidData(
                "frequencies must be positive and sum to 2^24".into(),
            ));
        }
        let inner =
            DefaultContiguousCategoricalEntropyModel::from_nonzero_fixed_point_probabilities(
                &freqs, false,
            )
            .map_err(|()| Error::InvalidData("invalid frequencies".into()))?;
        Ok(Model { inner, freqs })
    }

    /// The number of symbols.
    pub fn len(&self) -> usize {
        self.freqs.len()
    }

    /// Whether the model has no symbols (never true for a constructed model).
    pub fn is_empty(&self) -> bool {
        self.freqs.is_empty()
    }

    /// The frequency of `symbol`, out of `1 << 24`.
    pub fn frequency(&self, symbol: usize) -> u32 {
        self.freqs[symbol]
    }

    /// The ideal cost of `symbol` in bits.
    pub fn cost(&self, symbol: usize) -> f64 {
        f64::from(PRECISION) - f64::from(self.freqs[symbol]).log2()
    }
}

/// Scales `weights` to integer frequencies that sum to `1 << 24`, each ≥ 1.
///
/// Deterministic: the remainder after proportional scaling goes to the
/// largest frequencies first (ties by lower index), and any deficit is taken
/// from them.
///
/// ```
/// let f = chesspack::coder::quantize(&[3, 1, 0]).unwrap();
/// assert_eq!(f.iter().sum::<u32>(), 1 << 24);
/// assert!(f[2] >= 1 && f[0] > f[1]);
/// ```
///
/// # Errors
///
/// [`Error::InvalidData`] for an empty slice or more than `1 << 24` weights.
pub fn quantize(weights: &[u64]) -> Result<Vec<u32>, Error> {
    let n = weights.len() as u64;
    let total_target = 1u64 << PRECISION;
    if n == 0 || n > total_target {
        return Err(Error::InvalidData(
            "cannot quantize this many symbols".into(),
        ));
    }
    let free = total_target - n; // one unit per symbol is reserved
    let sum: u128 = weights.iter().map(|&w| u128::from(w)).sum();
    let mut freqs: Vec<u32> = if sum == 0 {
        let each = free / n;
        weights.iter().map(|_| (1 + each) as u32).collect()
    } else {
        weights
            .iter()
            .map(|&w| (1 + (u128::from(w) * u128::from(free) / sum) as u64) as u32)
            .collect()
    };
    let assigned: u64 = freqs.iter().map(|&f| u64::from(f)).sum();
    let mut left = total_target - assigned; // < n, since each term rounded down by < 1
    if left > 0 {
        let mut order: Vec<usize> = (0..freqs.len()).collect();
        order.sort_by_key(|&i| (std::cmp::Reverse(weights[i]), i));
        for &i in order.iter().cycle() {
            if left == 0 {
                break;
            }
            freqs[i] += 1;
            left -= 1;
        }
    }
    Ok(freqs)
}

/// Scales `weights` to frequencies ≥ 1 that sum to `1 << 24`, like
/// [`quantize`] but with one division per call instead of one per symbol
/// (for models rebuilt at every symbol). The remainder goes to the first
/// largest weight. Integer-only, so identical everywhere.
///
/// ```
/// let mut f = Vec::new();
/// chesspack::coder::quantize_fast(&[3, 1, 0], &mut f);
/// assert_eq!(f.iter().sum::<u32>(), 1 << 24);
/// assert!(f[2] >= 1 && f[0] > f[1]);
/// ```
///
/// # Panics
///
/// When there are no weights or more than `1 << 24` of them.
pub fn quantize_fast(weights: &[u64], out: &mut Vec<u32>) {
    let n = weights.len();
    assert!(n > 0 && n as u64 <= 1 << PRECISION, "weights to quantize");
    let total = 1u64 << PRECISION;
    let free = total - n as u64;
    let sum: u128 = weights.iter().map(|&w| u128::from(w)).sum();
    out.clear();
    match fast_scale(n, sum) {
        // The usual case (weights from an exp table, the largest 2^40).
        Some(scale) => out.extend(weights.iter().map(|&w| scaled(w, scale))),
        // w · scale / 2^64 ≤ w · free / sum, and w ≤ sum keeps it in range.
        None => match (u128::from(free) << 64).checked_div(sum) {
            Some(scale) => out.extend(
                weights
                    .iter()
                    .map(|&w| 1 + ((u128::from(w) * scale) >> 64) as u32),
            ),
            None => out.extend(weights.iter().map(|_| (1 + free / n as u64) as u32)),
        },
    }
    let mut best = 0;
    for (i, &w) in weights.iter().enumerate() {
        if w > weights[best] {
            best = i;
        }
    }
    let assigned: u64 = out.iter().map(|&f| u64::from(f)).sum();
    out[best] += (total - assigned) as u32;
}

/// [`quantize_fast`]'s scale for `n` symbols whose weights sum to `sum`,
/// when it fits 64 bits (whenever `sum` exceeds the `2^24 − n` frequency
/// left to share out, as it does for weights from an exp table whose
/// largest is 2^40): before the remainder, a symbol of weight `w` gets
/// [`scaled`]`(w, scale)`, a 64 × 64-bit product with the value of the
/// general 128-bit one.
pub(crate) fn fast_scale(n: usize, sum: u128) -> Option<u64> {
    let free = (1u64 << PRECISION).checked_sub(n as u64)?;
    (u128::from(free) << 64)
        .checked_div(sum)
        .and_then(|s| u64::try_from(s).ok())
}

/// The frequency of weight `w` under [`fast_scale`]'s `scale`, before the
/// remainder.
#[inline]
pub(crate) fn scaled(w: u64, scale: u64) -> u32 {
    1 + ((u128::from(w) * u128::from(scale)) >> 64) as u32
}

/// A model given by its quantile function (see [`Decoder::decode_by`]).
struct Quantile<F>(F);

impl<F> constriction::stream::model::EntropyModel<24> for Quantile<F> {
    type Symbol = usize;
    type Probability = u32;
}

impl<F: Fn(u32) -> (usize, u32, u32)> constriction::stream::model::DecoderModel<24>
    for Quantile<F>
{
    fn quantile_function(&self, quantile: u32) -> (usize, u32, std::num::NonZeroU32) {
        let (symbol, left, freq) = (self.0)(quantile);
        (
            symbol,
            left,
            std::num::NonZeroU32::new(freq).unwrap_or(std::num::NonZeroU32::MIN),
        )
    }
}

/// Frequencies of symbols `0..n` (each ≥ 1, summing to `1 << 24`) used as
/// a model directly, by linear scan: nothing to build or allocate, for
/// models that change at every symbol.
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

/// One symbol's interval, for [`Encoder::encode_interval`].
#[derive(Clone, Copy, Debug)]
struct Interval {
    left: u32,
    freq: std::num::NonZeroU32,
}

impl constriction::stream::model::EntropyModel<24> for Interval {
    type Symbol = usize;
    type Probability = u32;
}

impl constriction::stream::model::EncoderModel<24> for Interval {
    fn left_cumulative_and_probability(
        &self,
        _symbol: impl std::borrow::Borrow<usize>,
    ) -> Option<(u32, std::num::NonZeroU32)> {
        Some((self.left, self.freq))
    }
}

/// A range encoder.
#[derive(Debug, Default)]
pub struct Encoder {
    inner: DefaultRangeEncoder,
}

impl Encoder {
    /// An empty encoder.
    pub fn new() -> Encoder {
        Encoder::default()
    }

    /// Encodes `symbol` with `model`.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidData`] when `symbol` is out of the model's range.
    pub fn encode(&mut self, symbol: usize, model: &Model) -> Result<(), Error> {
        if symbol >= model.len() {
            return Err(Error::InvalidData(format!("symbol {symbol} out of range")));
        }
        self.inner
            .encode_symbol(symbol, &model.inner)
            .map_err(|e| Error::InvalidData(format!("range coder: {e}")))
    }

    /// Encodes `symbol` with frequencies as [`quantize_fast`] makes them
    /// (each ≥ 1, summing to `1 << 24`).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidData`] when `symbol` is out of range.
    pub fn encode_frequencies(&mut self, symbol: usize, freqs: &[u32]) -> Result<(), Error> {
        if symbol >= freqs.len() {
            return Err(Error::InvalidData(format!("symbol {symbol} out of range")));
        }
        self.inner
            .encode_symbol(symbol, Frequencies(freqs))
            .map_err(|e| Error::InvalidData(format!("range coder: {e}")))
    }

    /// Encodes a symbol by its interval: the sum of the frequencies before
    /// it and its own (as [`Encoder::encode_frequencies`] would compute
    /// them), so that a caller can work out intervals before it knows how
    /// the stream starts.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidData`] for an empty interval or one past `1 << 24`.
    pub fn encode_interval(&mut self, left: u32, freq: u32) -> Result<(), Error> {
        let freq = std::num::NonZeroU32::new(freq)
            .filter(|f| u64::from(left) + u64::from(f.get()) <= 1 << PRECISION)
            .ok_or_else(|| Error::InvalidData("bad interval".into()))?;
        self.inner
            .encode_symbol(0usize, Interval { left, freq })
            .map_err(|e| Error::InvalidData(format!("range coder: {e}")))
    }

    /// Ends the stream with the fewest bits that identify it.
    pub fn finish(self) -> Bits {
        let (bulk, state, situation) = self.inner.into_raw_parts();
        let lower = u128::from(state.lower());
        let upper = lower + u128::from(state.range().get()) - 1;
        // Whole 32-bit words, most significant byte first.
        let mut bytes = Vec::with_capacity(4 * bulk.len() + 8);
        for &word in &bulk {
            bytes.extend_from_slice(&word.to_be_bytes());
        }
        if state.range().get() == u64::MAX {
            // Nothing was encoded.
        } else if matches!(situation, EncoderSituation::Normal) && upper <= u128::from(u64::MAX) {
            let point = shortest_point(lower as u64, upper as u64);
            bytes.extend_from_slice(&point.to_be_bytes());
        } else {
            let sealed = RangeEncoder::from_raw_parts(Vec::new(), state, situation)
                .into_compressed()
                .unwrap_or_default();
            // from_raw_parts with an empty bulk re-emits only the seal words.
            for word in sealed {
                bytes.extend_from_slice(&word.to_be_bytes());
            }
        }
        trim_trailing_zeros(bytes)
    }
}

/// The value in `[lower, upper]` with the most trailing zero bits: `upper`
/// cut below the highest bit where it differs from `lower - 1` (0 when
/// `lower` is 0; no multiple of a larger power of two lies above
/// `lower - 1` in the block of `upper`).
fn shortest_point(lower: u64, upper: u64) -> u64 {
    match lower.checked_sub(1) {
        None => 0,
        Some(below) => {
            let b = 63 - (below ^ upper).leading_zeros();
            upper & !((1u64 << b) - 1)
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
#[derive(Debug)]
pub struct Decoder {
    inner: DefaultRangeDecoder,
}

impl Decoder {
    /// A decoder over `bits`.
    pub fn new(bits: &Bits) -> Decoder {
        let words: Vec<u32> = bits
            .as_bytes()
            .chunks(4)
            .map(|c| {
                let mut b = [0u8; 4];
                b[..c.len()].copy_from_slice(c);
                u32::from_be_bytes(b)
            })
            .collect();
        let inner = match DefaultRangeDecoder::from_compressed(words) {
            Ok(d) => d,
            Err(never) => match never {},
        };
        Decoder { inner }
    }

    /// Decodes one symbol with `model`.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidData`] when the range coder reports an error.
    pub fn decode(&mut self, model: &Model) -> Result<usize, Error> {
        self.inner
            .decode_symbol(&model.inner)
            .map_err(|e| Error::InvalidData(format!("range coder: {e}")))
    }
}

impl Decoder {
    /// Decodes a symbol written by [`Encoder::encode_frequencies`] with the
    /// same frequencies.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidData`] when the range coder reports an error.
    pub fn decode_frequencies(&mut self, freqs: &[u32]) -> Result<usize, Error> {
        self.inner
            .decode_symbol(Frequencies(freqs))
            .map_err(|e| Error::InvalidData(format!("range coder: {e}")))
    }

    /// Decodes a symbol of a model given by its quantile function:
    /// `find(q)` returns the symbol whose interval `[left, left + freq)`
    /// holds `q < 1 << 24`, with `left` and `freq` (the intervals of a model
    /// partition `0..1 << 24`). For models that find a symbol faster than
    /// they list every frequency.
    ///
    /// ```
    /// use chesspack::coder::{Decoder, Encoder};
    ///
    /// let freqs = [1 << 22, 3 << 22];
    /// let mut enc = Encoder::new();
    /// enc.encode_frequencies(1, &freqs).unwrap();
    /// let bits = enc.finish();
    /// let mut dec = Decoder::new(&bits);
    /// let symbol = dec
    ///     .decode_by(|q| if q < 1 << 22 { (0, 0, 1 << 22) } else { (1, 1 << 22, 3 << 22) })
    ///     .unwrap();
    /// assert_eq!(symbol, 1);
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::InvalidData`] when the range coder fails.
    pub fn decode_by(&mut self, find: impl Fn(u32) -> (usize, u32, u32)) -> Result<usize, Error> {
        self.inner
            .decode_symbol(Quantile(find))
            .map_err(|e| Error::InvalidData(format!("range coder: {e}")))
    }
}

/// A canonical Huffman code over symbols `0..n`, built from integer
/// frequencies.
///
/// Deterministic: equal weights are merged in a fixed order (leaves by
/// symbol, then internal nodes by creation), and codewords are assigned
/// canonically (shorter first, then by symbol).
///
/// ```
/// use chesspack::{bits::BitWriter, coder::Huffman};
///
/// let code = Huffman::from_frequencies(&[50, 25, 13, 12]);
/// assert_eq!((0..4).map(|s| code.length(s)).collect::<Vec<_>>(), [1, 2, 3, 3]);
/// let mut w = BitWriter::new();
/// for s in [3, 0, 1] {
///     code.encode(s, &mut w);
/// }
/// let bits = w.finish();
/// let mut r = bits.reader();
/// assert_eq!([code.decode(&mut r).unwrap(), code.decode(&mut r).unwrap()], [3, 0]);
/// ```
#[derive(Clone, Debug)]
pub struct Huffman {
    lengths: Vec<u32>,
    codes: Vec<u64>,
    /// Symbols sorted by (length, symbol).
    sorted: Vec<usize>,
    /// How many codewords have each length.
    counts: Vec<u32>,
}

impl Huffman {
    /// The Huffman code of `freqs` (zero frequencies count as 1). A single
    /// symbol gets the empty codeword.
    pub fn from_frequencies(freqs: &[u32]) -> Huffman {
        use std::{cmp::Reverse, collections::BinaryHeap};
        let n = freqs.len();
        let mut lengths = vec![0u32; n];
        if n > 1 {
            // Nodes 0..n are leaves; parents[i] links every node to its parent.
            let mut parents = vec![usize::MAX; 2 * n - 1];
            let mut heap: BinaryHeap<Reverse<(u64, usize)>> = freqs
                .iter()
                .enumerate()
                .map(|(i, &f)| Reverse((u64::from(f.max(1)), i)))
                .collect();
            let mut next = n;
            while let (Some(Reverse((wa, a))), Some(Reverse((wb, b)))) = (heap.pop(), heap.pop()) {
                parents[a] = next;
                parents[b] = next;
                heap.push(Reverse((wa + wb, next)));
                next += 1;
                if heap.len() == 1 {
                    break;
                }
            }
            // Depths: parents have larger indices than their children.
            let mut depth = vec![0u32; 2 * n - 1];
            for i in (0..2 * n - 2).rev() {
                depth[i] = depth[parents[i]] + 1;
            }
            lengths.copy_from_slice(&depth[..n]);
        }
        let max_len = lengths.iter().copied().max().unwrap_or(0) as usize;
        let mut sorted: Vec<usize> = (0..n).collect();
        sorted.sort_by_key(|&s| (lengths[s], s));
        let mut counts = vec![0u32; max_len + 1];
        for &l in &lengths {
            counts[l as usize] += 1;
        }
        let mut codes = vec![0u64; n];
        let mut code = 0u64;
        let mut prev_len = 0u32;
        for &s in &sorted {
            let l = lengths[s];
            if l == 0 {
                continue;
            }
            code <<= l - prev_len;
            codes[s] = code;
            code += 1;
            prev_len = l;
        }
        Huffman {
            lengths,
            codes,
            sorted,
            counts,
        }
    }

    /// The codeword length of `symbol` in bits.
    pub fn length(&self, symbol: usize) -> u32 {
        self.lengths[symbol]
    }

    /// Writes the codeword of `symbol`.
    pub fn encode(&self, symbol: usize, w: &mut BitWriter) {
        w.write(self.codes[symbol], self.lengths[symbol]);
    }

    /// Reads one codeword.
    ///
    /// # Errors
    ///
    /// [`Error::Truncated`] when the bits run out inside a codeword.
    pub fn decode(&self, r: &mut crate::bits::BitReader<'_>) -> Result<usize, Error> {
        if self.lengths.len() == 1 {
            return Ok(0);
        }
        let (mut code, mut first, mut index) = (0u64, 0u64, 0u64);
        for &count in self.counts.iter().skip(1) {
            code |= u64::from(r.read_bit()?);
            let count = u64::from(count);
            if code - first < count {
                return Ok(self.sorted[(index + code - first) as usize]);
            }
            index += count;
            first = (first + count) << 1;
            code <<= 1;
        }
        Err(Error::InvalidData("invalid huffman codeword".into()))
    }
}

#[cfg(test)]
mod tests {
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
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let lower = x >> (i % 64);
            let upper = lower.saturating_add(x.rotate_left(17) >> (i % 61));
            let want = if lower == 0 { 0 } else { brute(lower, upper) };
            assert_eq!(super::shortest_point(lower, upper), want, "{lower} {upper}");
        }
    }

    use super::*;

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

    #[test]
    fn huffman_is_prefix_free_and_round_trips() {
        for seed in 1..50u32 {
            let freqs: Vec<u32> = (0..(seed % 37 + 2))
                .map(|i| (i * 7919 + seed * 104_729) % 1000 + (i % 3) * 100_000)
                .collect();
            let code = Huffman::from_frequencies(&freqs);
            let kraft: f64 = (0..freqs.len())
                .map(|s| 0.5f64.powi(code.length(s) as i32))
                .sum();
            assert!((kraft - 1.0).abs() < 1e-9);
            let mut w = BitWriter::new();
            for s in 0..freqs.len() {
                code.encode(s, &mut w);
            }
            let bits = w.finish();
            let mut r = bits.reader();
            for s in 0..freqs.len() {
                assert_eq!(code.decode(&mut r).unwrap(), s);
            }
        }
    }
}

/// An adaptive binary probability for [`BinaryEncoder`] and
/// [`BinaryDecoder`]: the chance of a 0 bit in 1/2048ths, moved 1/32 of the
/// way towards each bit coded (the LZMA scheme).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BitModel(u16);

impl Default for BitModel {
    fn default() -> BitModel {
        BitModel(1 << 10)
    }
}

const BIT_MODEL_BITS: u32 = 11;
const BIT_MODEL_SHIFT: u32 = 5;
const TOP: u32 = 1 << 24;

/// A binary range encoder with adaptive probabilities, for side streams
/// (clock times, counts) whose statistics are learned as they are coded.
/// Integer-only, so identical everywhere.
///
/// constriction's coders take a fixed model per symbol; rebuilding one for
/// every adaptive update would cost more than the coding itself, so this
/// small coder (the well-known LZMA construction) is used instead.
///
/// ```
/// use chesspack::coder::{BinaryDecoder, BinaryEncoder, BitModel};
///
/// let mut models = vec![BitModel::default(); 16];
/// let mut enc = BinaryEncoder::new();
/// for v in [3u32, 3, 3, 7, 0] {
///     enc.encode_tree(&mut models, 4, v);
/// }
/// enc.encode_direct(12345, 20);
/// let bytes = enc.finish();
///
/// let mut models = vec![BitModel::default(); 16];
/// let mut dec = BinaryDecoder::new(&bytes);
/// let out: Vec<u32> = (0..5).map(|_| dec.decode_tree(&mut models, 4)).collect();
/// assert_eq!(out, [3, 3, 3, 7, 0]);
/// assert_eq!(dec.decode_direct(20), 12345);
/// ```
#[derive(Debug)]
pub struct BinaryEncoder {
    low: u64,
    range: u32,
    cache: u8,
    cache_size: u64,
    out: Vec<u8>,
}

impl Default for BinaryEncoder {
    fn default() -> BinaryEncoder {
        BinaryEncoder::new()
    }
}

impl BinaryEncoder {
    /// An empty encoder.
    pub fn new() -> BinaryEncoder {
        BinaryEncoder {
            low: 0,
            range: u32::MAX,
            cache: 0,
            cache_size: 1,
            out: Vec::new(),
        }
    }

    fn shift_low(&mut self) {
        if self.low < 0xff00_0000 || self.low > 0xffff_ffff {
            let carry = (self.low >> 32) as u8;
            let mut temp = self.cache;
            loop {
                self.out.push(temp.wrapping_add(carry));
                temp = 0xff;
                self.cache_size -= 1;
                if self.cache_size == 0 {
                    break;
                }
            }
            self.cache = (self.low >> 24) as u8;
        }
        self.cache_size += 1;
        self.low = (self.low & 0x00ff_ffff) << 8;
    }

    /// Encodes `bit` with the adaptive probability `model`, updating it.
    pub fn encode_bit(&mut self, model: &mut BitModel, bit: bool) {
        let bound = (self.range >> BIT_MODEL_BITS) * u32::from(model.0);
        if bit {
            self.low += u64::from(bound);
            self.range -= bound;
            model.0 -= model.0 >> BIT_MODEL_SHIFT;
        } else {
            self.range = bound;
            model.0 += ((1 << BIT_MODEL_BITS) - model.0) >> BIT_MODEL_SHIFT;
        }
        while self.range < TOP {
            self.range <<= 8;
            self.shift_low();
        }
    }

    /// Encodes the low `n` bits of `value` (n ≤ 32) with probability 1/2 each.
    pub fn encode_direct(&mut self, value: u32, n: u32) {
        for i in (0..n).rev() {
            self.range >>= 1;
            if value >> i & 1 == 1 {
                self.low += u64::from(self.range);
            }
            while self.range < TOP {
                self.range <<= 8;
                self.shift_low();
            }
        }
    }

    /// Encodes `value < 2^n` most significant bit first with a binary tree
    /// of adaptive probabilities (`models` holds at least `2^n` of them).
    pub fn encode_tree(&mut self, models: &mut [BitModel], n: u32, value: u32) {
        let mut node = 1usize;
        for i in (0..n).rev() {
            let bit = value >> i & 1 == 1;
            self.encode_bit(&mut models[node], bit);
            node = node * 2 + usize::from(bit);
        }
    }

    /// Ends the stream.
    pub fn finish(mut self) -> Vec<u8> {
        for _ in 0..5 {
            self.shift_low();
        }
        self.out
    }
}

/// Decodes what [`BinaryEncoder`] wrote. Reads past the end as zero bytes,
/// so garbage input gives garbage values, never a panic.
#[derive(Debug)]
pub struct BinaryDecoder<'a> {
    data: &'a [u8],
    pos: usize,
    range: u32,
    code: u32,
}

impl<'a> BinaryDecoder<'a> {
    /// A decoder over `data`.
    pub fn new(data: &'a [u8]) -> BinaryDecoder<'a> {
        let mut d = BinaryDecoder {
            data,
            pos: 1, // the encoder's first byte is always 0
            range: u32::MAX,
            code: 0,
        };
        for _ in 0..4 {
            d.code = (d.code << 8) | u32::from(d.next_byte());
        }
        d
    }

    fn next_byte(&mut self) -> u8 {
        let b = self.data.get(self.pos).copied().unwrap_or(0);
        self.pos += 1;
        b
    }

    /// Whether the decoder has read past the end of its data (a sign of
    /// damage when more was expected).
    pub fn overrun(&self) -> bool {
        self.pos > self.data.len() + 4
    }

    /// Decodes a bit with the adaptive probability `model`, updating it.
    pub fn decode_bit(&mut self, model: &mut BitModel) -> bool {
        let bound = (self.range >> BIT_MODEL_BITS) * u32::from(model.0);
        let bit = if self.code < bound {
            self.range = bound;
            model.0 += ((1 << BIT_MODEL_BITS) - model.0) >> BIT_MODEL_SHIFT;
            false
        } else {
            self.code -= bound;
            self.range -= bound;
            model.0 -= model.0 >> BIT_MODEL_SHIFT;
            true
        };
        while self.range < TOP {
            self.range <<= 8;
            self.code = (self.code << 8) | u32::from(self.next_byte());
        }
        bit
    }

    /// Decodes `n` bits written by [`BinaryEncoder::encode_direct`].
    pub fn decode_direct(&mut self, n: u32) -> u32 {
        let mut v = 0u32;
        for _ in 0..n {
            self.range >>= 1;
            let bit = self.code >= self.range;
            if bit {
                self.code -= self.range;
            }
            v = (v << 1) | u32::from(bit);
            while self.range < TOP {
                self.range <<= 8;
                self.code = (self.code << 8) | u32::from(self.next_byte());
            }
        }
        v
    }

    /// Decodes a value written by [`BinaryEncoder::encode_tree`].
    pub fn decode_tree(&mut self, models: &mut [BitModel], n: u32) -> u32 {
        let mut node = 1usize;
        for _ in 0..n {
            let bit = self.decode_bit(&mut models[node]);
            node = node * 2 + usize::from(bit);
        }
        (node - (1 << n)) as u32
    }
}
