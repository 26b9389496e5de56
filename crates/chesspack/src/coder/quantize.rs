//! Integer probabilities: [`Model`] and the quantisers that turn weights
//! into frequencies summing to exactly `1 << PRECISION`.

use super::PRECISION;
use crate::Error;

/// A categorical distribution over symbols `0..n` with integer frequencies.
#[derive(Clone, Debug)]
pub(crate) struct Model {
    /// `cdf[i]`: the sum of the frequencies below symbol `i` (`n + 1` of
    /// them, the first 0, the last `1 << 24`).
    pub(super) cdf: Vec<u32>,
}

impl Model {
    /// A model whose frequencies are `weights` scaled to sum to `1 << 24`,
    /// each at least 1 (integer arithmetic only).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidData`] when there are no weights or more than `1 << 24`.
    pub(crate) fn from_weights(weights: &[u64]) -> Result<Model, Error> {
        Model::from_frequencies(quantize(weights)?)
    }

    /// A model from frequencies that are all ≥ 1 and sum to `1 << 24`.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidData`] when they do not.
    pub(crate) fn from_frequencies(freqs: Vec<u32>) -> Result<Model, Error> {
        if freqs.is_empty()
            || freqs.contains(&0)
            || freqs.iter().map(|&f| u64::from(f)).sum::<u64>() != 1 << PRECISION
        {
            return Err(Error::InvalidData(
                "frequencies must be positive and sum to 2^24".into(),
            ));
        }
        let cdf = std::iter::once(0)
            .chain(freqs.iter().scan(0, |sum, &f| {
                *sum += f;
                Some(*sum)
            }))
            .collect();
        Ok(Model { cdf })
    }

    /// The number of symbols.
    pub(crate) fn len(&self) -> usize {
        self.cdf.len() - 1
    }

    /// The frequency of `symbol`, out of `1 << 24`.
    pub(crate) fn frequency(&self, symbol: usize) -> u32 {
        self.cdf[symbol + 1] - self.cdf[symbol]
    }
}

/// Scales `weights` to integer frequencies that sum to `1 << 24`, each ≥ 1.
///
/// Deterministic: the remainder after proportional scaling goes to the
/// largest frequencies first (ties by lower index), and any deficit is taken
/// from them.
///
/// # Errors
///
/// [`Error::InvalidData`] for an empty slice or more than `1 << 24` weights.
pub(crate) fn quantize(weights: &[u64]) -> Result<Vec<u32>, Error> {
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
/// # Panics
///
/// When there are no weights or more than `1 << 24` of them.
pub(crate) fn quantize_fast(weights: &[u64], out: &mut Vec<u32>) {
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

/// The examples of crate-private items, run as unit tests.
#[cfg(test)]
mod examples {
    #[test]
    fn example_quantize_model() {
        use crate::coder::{Decoder, Encoder, Model};

        let model = Model::from_weights(&[90, 9, 1]).unwrap();
        let mut enc = Encoder::new();
        for s in [0, 0, 1, 2, 0] {
            enc.encode(s, &model).unwrap();
        }
        let bits = enc.finish();
        let mut dec = Decoder::new(&bits);
        let out: Vec<usize> = (0..5).map(|_| dec.decode(&model).unwrap()).collect();
        assert_eq!(out, [0, 0, 1, 2, 0]);
    }

    #[test]
    fn example_quantize_quantize() {
        let f = crate::coder::quantize(&[3, 1, 0]).unwrap();
        assert_eq!(f.iter().sum::<u32>(), 1 << 24);
        assert!(f[2] >= 1 && f[0] > f[1]);
    }

    #[test]
    fn example_quantize_quantize_fast() {
        let mut f = Vec::new();
        crate::coder::quantize_fast(&[3, 1, 0], &mut f);
        assert_eq!(f.iter().sum::<u32>(), 1 << 24);
        assert!(f[2] >= 1 && f[0] > f[1]);
    }
}
