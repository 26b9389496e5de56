//! The `move-lengths` column ([`LengthCoder`]) and the bit-coding helpers
//! that it and the evaluation coder share.

use super::get_varint;
use crate::coder::{BinaryDecoder, BinaryEncoder, BitModel};

/// Codes the bit lengths of the games' move streams: the bit length of
/// `length + 1` through an adaptive tree, then its two bits below the
/// leading one through adaptive trees of that bit length, then the other
/// bits as they are; the mainline and the variations apart.
pub(crate) struct LengthCoder {
    exponents: Vec<BitModel>,
    tops: Vec<BitModel>,
}

/// Bits below the leading one that [`LengthCoder`] models.
pub(super) const LENGTH_TOP_BITS: u32 = 2;

impl LengthCoder {
    pub(crate) fn new() -> LengthCoder {
        LengthCoder {
            exponents: vec![BitModel::default(); 2 * 64],
            tops: vec![BitModel::default(); (2 * 64) << LENGTH_TOP_BITS],
        }
    }

    pub(super) fn models(&mut self, variation: bool, n: u32) -> &mut [BitModel] {
        let i = (usize::from(variation) * 64 + n as usize) << LENGTH_TOP_BITS;
        &mut self.tops[i..i + (1 << LENGTH_TOP_BITS)]
    }

    pub(super) fn encode(&mut self, enc: &mut BinaryEncoder, variation: bool, length: u64) {
        let v = length.saturating_add(1);
        let n = 63 - v.leading_zeros();
        let c = usize::from(variation) * 64;
        enc.encode_tree(&mut self.exponents[c..c + 64], 6, n);
        let k = n.min(LENGTH_TOP_BITS);
        let low = v & ((1u64 << n) - 1);
        enc.encode_tree(self.models(variation, n), k, (low >> (n - k)) as u32);
        encode_low(enc, low, n - k);
    }

    pub(super) fn decode(&mut self, dec: &mut BinaryDecoder<'_>, variation: bool) -> u64 {
        let c = usize::from(variation) * 64;
        let n = dec.decode_tree(&mut self.exponents[c..c + 64], 6);
        let k = n.min(LENGTH_TOP_BITS);
        let top = u64::from(dec.decode_tree(self.models(variation, n), k));
        let r = n - k;
        ((1u64 << n) | (top << r) | decode_low(dec, r)) - 1
    }
}

/// The `move-lengths` column being read.
pub(super) enum Lengths<'a> {
    /// Varints (formats 1 and 2).
    Varints(&'a [u8]),
    /// [`LengthCoder`]'s stream.
    Coded(BinaryDecoder<'a>, LengthCoder),
}

impl Lengths<'_> {
    pub(super) fn next(&mut self, variation: bool) -> Result<usize, String> {
        let length = match self {
            Lengths::Varints(data) => get_varint(data)?,
            Lengths::Coded(dec, coder) => coder.decode(dec, variation),
        };
        usize::try_from(length).map_err(|_| "move length overflow".into())
    }

    pub(super) fn overrun(&self) -> bool {
        match self {
            Lengths::Varints(data) => !data.is_empty(),
            Lengths::Coded(dec, _) => dec.overrun(),
        }
    }
}

/// Encodes the low `n` bits of `value` (n < 64) with probability 1/2 each.
pub(in crate::archive) fn encode_low(enc: &mut BinaryEncoder, value: u64, n: u32) {
    if n > 32 {
        enc.encode_direct((value >> 32) as u32, n - 32);
        enc.encode_direct(value as u32, 32);
    } else {
        enc.encode_direct(value as u32, n);
    }
}

/// Decodes what [`encode_low`] wrote.
pub(in crate::archive) fn decode_low(dec: &mut BinaryDecoder<'_>, n: u32) -> u64 {
    if n > 32 {
        (u64::from(dec.decode_direct(n - 32)) << 32) | u64::from(dec.decode_direct(32))
    } else {
        u64::from(dec.decode_direct(n))
    }
}

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
