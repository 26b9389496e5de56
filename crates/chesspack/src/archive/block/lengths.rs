//! The `move-lengths` column ([`LengthCoder`]) and the bit-coding helpers
//! that it and the evaluation coder share.

use super::{unzigzag, zigzag};
use crate::coder::{BinaryDecoder, BinaryEncoder, BitModel, decode_low, encode_low};

/// Codes the bit lengths of the games' move streams: the bit length of
/// `length + 1` through an adaptive tree, then its two bits below the
/// leading one through adaptive trees of that bit length, then the other
/// bits as they are; the mainline and the variations apart.
///
/// It also codes the ply count of a game stored as an
/// annotated line (`E_ANNOTATED`), the same way, before its moves' length;
/// that length is then coded as its difference from the ply count times
/// the block's bits a ply so far, by the ply count's bit length.
pub(crate) struct LengthCoder {
    exponents: Vec<BitModel>,
    tops: Vec<BitModel>,
    /// The ply counts' trees.
    ply_exponents: Vec<BitModel>,
    ply_tops: Vec<BitModel>,
    /// The trees of the differences from the predicted length, by the ply
    /// count's bit length.
    residual_exponents: Vec<BitModel>,
    residual_tops: Vec<BitModel>,
    /// The ply count coded for the next mainline length.
    pending: Option<u64>,
    /// The lengths and ply counts of the annotated lines so far.
    sum_bits: u64,
    sum_plies: u64,
}

/// Bit lengths of a ply count that the residual trees tell apart.
const PLY_CLASSES: usize = 16;

/// Bits below the leading one that [`LengthCoder`] models.
pub(super) const LENGTH_TOP_BITS: u32 = 2;

impl LengthCoder {
    pub(crate) fn new() -> LengthCoder {
        LengthCoder {
            exponents: vec![BitModel::default(); 2 * 64],
            tops: vec![BitModel::default(); (2 * 64) << LENGTH_TOP_BITS],
            ply_exponents: vec![BitModel::warm(); 64],
            ply_tops: vec![BitModel::warm(); 64 << LENGTH_TOP_BITS],
            residual_exponents: vec![BitModel::warm(); PLY_CLASSES * 64],
            residual_tops: vec![BitModel::warm(); (PLY_CLASSES * 64) << LENGTH_TOP_BITS],
            pending: None,
            sum_bits: 0,
            sum_plies: 0,
        }
    }

    /// Codes the ply count (at least 1) of an annotated line, whose
    /// mainline length comes next.
    pub(super) fn encode_plies(&mut self, enc: &mut BinaryEncoder, plies: u64) {
        encode_number(enc, &mut self.ply_exponents, &mut self.ply_tops, plies);
        self.pending = Some(plies);
    }

    /// Decodes what [`LengthCoder::encode_plies`] wrote.
    pub(super) fn decode_plies(&mut self, dec: &mut BinaryDecoder<'_>) -> u64 {
        let plies = decode_number(dec, &mut self.ply_exponents, &mut self.ply_tops);
        self.pending = Some(plies);
        plies
    }

    /// The length predicted for a line of `plies` plies, and the residual
    /// trees' offset.
    fn predict(&self, plies: u64) -> (u64, usize) {
        let predicted = if self.sum_plies == 0 {
            plies.saturating_mul(5) / 2
        } else {
            let p = u128::from(plies) * u128::from(self.sum_bits) / u128::from(self.sum_plies);
            u64::try_from(p).unwrap_or(u64::MAX)
        };
        let class = ((64 - plies.leading_zeros()) as usize).min(PLY_CLASSES - 1);
        (predicted, class * 64)
    }

    fn learn(&mut self, plies: u64, length: u64) {
        self.sum_bits = self.sum_bits.saturating_add(length);
        self.sum_plies = self.sum_plies.saturating_add(plies);
    }

    pub(super) fn encode(&mut self, enc: &mut BinaryEncoder, variation: bool, length: u64) {
        if !variation && let Some(plies) = self.pending.take() {
            let (predicted, c) = self.predict(plies);
            let z = zigzag(length as i64 - predicted as i64);
            encode_number(
                enc,
                &mut self.residual_exponents[c..c + 64],
                &mut self.residual_tops[c << LENGTH_TOP_BITS..(c + 64) << LENGTH_TOP_BITS],
                z + 1,
            );
            self.learn(plies, length);
            return;
        }
        let c = usize::from(variation) * 64;
        encode_number(
            enc,
            &mut self.exponents[c..c + 64],
            &mut self.tops[c << LENGTH_TOP_BITS..(c + 64) << LENGTH_TOP_BITS],
            length.saturating_add(1),
        );
    }

    pub(super) fn decode(&mut self, dec: &mut BinaryDecoder<'_>, variation: bool) -> u64 {
        if !variation && let Some(plies) = self.pending.take() {
            let (predicted, c) = self.predict(plies);
            let z = decode_number(
                dec,
                &mut self.residual_exponents[c..c + 64],
                &mut self.residual_tops[c << LENGTH_TOP_BITS..(c + 64) << LENGTH_TOP_BITS],
            );
            // Damaged streams can give anything: a length out of range
            // reads as u64::MAX, which the caller rejects.
            let length = (predicted as i64)
                .checked_add(unzigzag(z.saturating_sub(1)))
                .and_then(|l| u64::try_from(l).ok())
                .unwrap_or(u64::MAX);
            self.learn(plies, length.min(1 << 40));
            return length;
        }
        let c = usize::from(variation) * 64;
        decode_number(
            dec,
            &mut self.exponents[c..c + 64],
            &mut self.tops[c << LENGTH_TOP_BITS..(c + 64) << LENGTH_TOP_BITS],
        ) - 1
    }
}

/// Codes `v` ≥ 1: its bit length through `exponents` (a tree of 64), its
/// two bits below the leading one through `tops` (four a bit length), the
/// rest as they are.
fn encode_number(
    enc: &mut BinaryEncoder,
    exponents: &mut [BitModel],
    tops: &mut [BitModel],
    v: u64,
) {
    let n = 63 - v.leading_zeros();
    enc.encode_tree(exponents, 6, n);
    let k = n.min(LENGTH_TOP_BITS);
    let low = v & ((1u64 << n) - 1);
    let t = (n as usize) << LENGTH_TOP_BITS;
    enc.encode_tree(
        &mut tops[t..t + (1 << LENGTH_TOP_BITS)],
        k,
        (low >> (n - k)) as u32,
    );
    encode_low(enc, low, n - k);
}

/// Decodes what [`encode_number`] wrote.
fn decode_number(
    dec: &mut BinaryDecoder<'_>,
    exponents: &mut [BitModel],
    tops: &mut [BitModel],
) -> u64 {
    let n = dec.decode_tree(exponents, 6);
    let k = n.min(LENGTH_TOP_BITS);
    let t = (n as usize) << LENGTH_TOP_BITS;
    let top = u64::from(dec.decode_tree(&mut tops[t..t + (1 << LENGTH_TOP_BITS)], k));
    let r = n - k;
    (1u64 << n) | (top << r) | decode_low(dec, r)
}

/// The `move-lengths` column being read: [`LengthCoder`]'s stream.
pub(super) struct Lengths<'a> {
    dec: BinaryDecoder<'a>,
    coder: LengthCoder,
}

impl<'a> Lengths<'a> {
    /// The lengths of the column `data`.
    pub(super) fn new(data: &'a [u8]) -> Lengths<'a> {
        Lengths {
            dec: BinaryDecoder::new(data),
            coder: LengthCoder::new(),
        }
    }

    pub(super) fn next(&mut self, variation: bool) -> Result<usize, String> {
        usize::try_from(self.coder.decode(&mut self.dec, variation))
            .map_err(|_| "move length overflow".into())
    }

    /// The ply count of an annotated line.
    pub(super) fn plies(&mut self) -> Result<usize, String> {
        usize::try_from(self.coder.decode_plies(&mut self.dec))
            .ok()
            .filter(|&p| p <= MAX_PLIES)
            .ok_or_else(|| "implausible ply count".into())
    }

    pub(super) fn overrun(&self) -> bool {
        self.dec.overrun()
    }
}

/// The most plies an annotated line may have (a corrupted count is
/// rejected before its events are spelled out).
pub(super) const MAX_PLIES: usize = 1 << 20;

pub(super) fn encode_gamma(enc: &mut BinaryEncoder, lengths: &mut [BitModel], v: u64) {
    // v ≥ 1: its bit length − 1 through the tree, then the bits below the
    // leading one.
    let n = 63 - v.leading_zeros();
    enc.encode_tree(lengths, 6, n);
    encode_low(enc, v, n);
}

pub(super) fn decode_gamma(dec: &mut BinaryDecoder<'_>, lengths: &mut [BitModel]) -> u64 {
    let n = dec.decode_tree(lengths, 6);
    (1u64 << n) | decode_low(dec, n)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lengths with and without a ply count before them, a
    /// length far from what its ply count predicts and a variation's
    /// length after a counted mainline come back.
    #[test]
    fn lengths_and_ply_counts_round_trip() {
        let items: [(Option<u64>, bool, u64); 8] = [
            (None, false, 180),
            (Some(80), false, 200),
            (Some(1), false, 0),
            (Some(120), false, 5000),
            (Some(40), false, 98),
            (None, true, 12),
            (Some(1 << 20), false, 1 << 22),
            (None, false, 0),
        ];
        let mut coder = LengthCoder::new();
        let mut enc = BinaryEncoder::new();
        for &(plies, variation, length) in &items {
            if let Some(p) = plies {
                coder.encode_plies(&mut enc, p);
            }
            coder.encode(&mut enc, variation, length);
        }
        let bytes = enc.finish();
        let mut lengths = Lengths::new(&bytes);
        for &(plies, variation, length) in &items {
            if let Some(p) = plies {
                assert_eq!(lengths.plies().unwrap() as u64, p);
            }
            assert_eq!(lengths.next(variation).unwrap() as u64, length);
        }
        assert!(!lengths.overrun());
    }

    /// A length near what its ply count predicts costs fewer bits after
    /// the count than the same count and length coded apart.
    #[test]
    fn a_ply_count_predicts_the_length() {
        let size = |counted: bool| {
            let mut coder = LengthCoder::new();
            let mut enc = BinaryEncoder::new();
            for i in 0..200u64 {
                let plies = 30 + (i * 37) % 90;
                if counted {
                    coder.encode_plies(&mut enc, plies);
                } else {
                    // The count in the variations' trees, unused.
                    coder.encode(&mut enc, true, plies);
                }
                coder.encode(&mut enc, false, plies * 5 / 2 + i % 7);
            }
            enc.finish().len()
        };
        assert!(size(true) < size(false), "{} {}", size(true), size(false));
    }
}
