//! Adaptive binary range coding (the LZMA scheme): [`BitModel`],
//! [`BinaryEncoder`] and [`BinaryDecoder`], for the archive's numeric columns.

/// An adaptive binary probability for [`BinaryEncoder`] and
/// [`BinaryDecoder`]: the chance of a 0 bit in 1/2048ths, moved 1/32 of the
/// way towards each bit coded (the LZMA scheme).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct BitModel(u16);

impl Default for BitModel {
    fn default() -> BitModel {
        BitModel(1 << 10)
    }
}

impl BitModel {
    /// A model that learns faster from its first bits: it moves 1/2 of the
    /// way towards the first bit coded, 1/4 towards the second, then 1/8
    /// and 1/16, and 1/32 from the fifth on, as the default one does from
    /// the start. Contexts that see few bits cost less to learn.
    pub(crate) fn warm() -> BitModel {
        BitModel(1 << 10 | WARM_STEPS << WARM_SHIFT)
    }

    /// A model whose chance of a 0 bit is `p` 2048ths (clamped to
    /// 1..=2047), for a bit of fixed probability: code with a copy, which
    /// the update changes, not the original.
    pub(crate) fn fixed(p: u32) -> BitModel {
        BitModel(p.clamp(1, (1 << BIT_MODEL_BITS) - 1) as u16)
    }

    /// The model's state as stored in a file (its chance and the faster
    /// steps it has left).
    #[cfg(any(test, feature = "train"))]
    pub(crate) fn to_raw(self) -> u16 {
        self.0
    }

    /// A model from [`BitModel::to_raw`]; `None` for a state that no model
    /// has (a chance of 0 or 2048, more steps than a warm model).
    pub(crate) fn from_raw(raw: u16) -> Option<BitModel> {
        let p = raw & P_MASK;
        let steps = raw >> WARM_SHIFT;
        (p > 0 && steps <= WARM_STEPS && raw & (1 << BIT_MODEL_BITS) == 0).then_some(BitModel(raw))
    }

    /// The chance of a 0 bit, in 1/2048ths.
    fn p(self) -> u32 {
        u32::from(self.0 & P_MASK)
    }

    fn update(&mut self, bit: bool) {
        let steps = self.0 >> WARM_SHIFT;
        let shift = BIT_MODEL_SHIFT - u32::from(steps);
        let p = self.0 & P_MASK;
        // Both made, one kept: no branch on the bit.
        let (one, zero) = (p - (p >> shift), p + (((1 << BIT_MODEL_BITS) - p) >> shift));
        let p = if bit { one } else { zero };
        self.0 = p | steps.saturating_sub(1) << WARM_SHIFT;
    }
}

const BIT_MODEL_BITS: u32 = 11;
const BIT_MODEL_SHIFT: u32 = 5;
/// The bits of a [`BitModel`] that hold its chance of a 0 (always below
/// 2048: each update keeps it in 1..=2047); the bits above count the
/// faster steps that a [`BitModel::warm`] model has left.
const P_MASK: u16 = (1 << BIT_MODEL_BITS) - 1;
const WARM_SHIFT: u32 = 12;
const WARM_STEPS: u16 = 4;
const TOP: u32 = 1 << 24;

/// A binary range encoder with adaptive probabilities, for side streams
/// (clock times, counts) whose statistics are learned as they are coded.
/// Integer-only, so identical everywhere.
///
/// constriction's coders take a fixed model per symbol; rebuilding one for
/// every adaptive update would cost more than the coding itself, so this
/// small coder (the well-known LZMA construction) is used instead.
#[derive(Debug)]
pub(crate) struct BinaryEncoder {
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
    pub(crate) fn new() -> BinaryEncoder {
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
    pub(crate) fn encode_bit(&mut self, model: &mut BitModel, bit: bool) {
        let bound = (self.range >> BIT_MODEL_BITS) * model.p();
        if bit {
            self.low += u64::from(bound);
            self.range -= bound;
        } else {
            self.range = bound;
        }
        model.update(bit);
        while self.range < TOP {
            self.range <<= 8;
            self.shift_low();
        }
    }

    /// Encodes the low `n` bits of `value` (n ≤ 32) with probability 1/2 each.
    pub(crate) fn encode_direct(&mut self, value: u32, n: u32) {
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
    pub(crate) fn encode_tree(&mut self, models: &mut [BitModel], n: u32, value: u32) {
        let mut node = 1usize;
        for i in (0..n).rev() {
            let bit = value >> i & 1 == 1;
            self.encode_bit(&mut models[node], bit);
            node = node * 2 + usize::from(bit);
        }
    }

    /// Ends the stream.
    pub(crate) fn finish(mut self) -> Vec<u8> {
        for _ in 0..5 {
            self.shift_low();
        }
        self.out
    }

    /// Ends the stream in four bytes fewer, for [`BinaryDecoder::new_short`]
    /// (a stream per game): without its first byte, which is always 0, and
    /// ending on a value of the last interval whose last three bytes are 0
    /// (an interval of 2^24 or more holds one), which are left out: the
    /// decoder reads zeros past the end.
    pub(crate) fn finish_short(mut self) -> Vec<u8> {
        const LOW_BYTES: u64 = 0x00ff_ffff;
        self.low = (self.low + LOW_BYTES) & !LOW_BYTES;
        let mut out = self.finish();
        out.truncate(out.len() - 3);
        out.remove(0);
        out
    }
}

/// Decodes what [`BinaryEncoder`] wrote. Reads past the end as zero bytes,
/// so garbage input gives garbage values, never a panic.
#[derive(Debug)]
pub(crate) struct BinaryDecoder<'a> {
    data: &'a [u8],
    pos: usize,
    range: u32,
    code: u32,
}

impl<'a> BinaryDecoder<'a> {
    /// A decoder over `data`.
    pub(crate) fn new(data: &'a [u8]) -> BinaryDecoder<'a> {
        // The encoder's first byte is always 0.
        BinaryDecoder::from(data, 1)
    }

    /// A decoder over what [`BinaryEncoder::finish_short`] wrote.
    pub(crate) fn new_short(data: &'a [u8]) -> BinaryDecoder<'a> {
        BinaryDecoder::from(data, 0)
    }

    /// A decoder over `data` whose first code byte is at `pos`.
    fn from(data: &'a [u8], pos: usize) -> BinaryDecoder<'a> {
        let mut d = BinaryDecoder {
            data,
            pos,
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
    pub(crate) fn overrun(&self) -> bool {
        self.pos > self.data.len() + 4
    }

    /// Decodes a bit with the adaptive probability `model`, updating it.
    pub(crate) fn decode_bit(&mut self, model: &mut BitModel) -> bool {
        let mut state = (self.range, self.code);
        let bit = self.bit_in(&mut state, model);
        (self.range, self.code) = state;
        bit
    }

    /// [`decode_bit`](BinaryDecoder::decode_bit) from `state`, the range
    /// and the code, which a loop of bits keeps in registers until it
    /// ends (written back at each bit, they made every bit wait for the
    /// store of the one before).
    #[inline(always)]
    fn bit_in(&mut self, (range, code): &mut (u32, u32), model: &mut BitModel) -> bool {
        // Without branches on the bit, which is as hard to guess as the
        // model is good: a mask of it picks the new range and code.
        let bound = (*range >> BIT_MODEL_BITS) * model.p();
        let bit = *code >= bound;
        let mask = u32::from(bit).wrapping_neg();
        *code -= bound & mask;
        *range = (bound & !mask) | ((*range - bound) & mask);
        model.update(bit);
        while *range < TOP {
            *range <<= 8;
            *code = (*code << 8) | u32::from(self.next_byte());
        }
        bit
    }

    /// Decodes `n` bits written by [`BinaryEncoder::encode_direct`].
    pub(crate) fn decode_direct(&mut self, n: u32) -> u32 {
        // In registers, as in `bit_in`.
        let (mut range, mut code) = (self.range, self.code);
        let mut v = 0u32;
        for _ in 0..n {
            range >>= 1;
            let bit = code >= range;
            code -= range & u32::from(bit).wrapping_neg();
            v = (v << 1) | u32::from(bit);
            // Halved from at least `TOP`: one byte brings it back.
            if range < TOP {
                range <<= 8;
                code = (code << 8) | u32::from(self.next_byte());
            }
        }
        (self.range, self.code) = (range, code);
        v
    }

    /// Decodes a value written by [`BinaryEncoder::encode_tree`].
    pub(crate) fn decode_tree(&mut self, models: &mut [BitModel], n: u32) -> u32 {
        let mut state = (self.range, self.code);
        let mut node = 1usize;
        for _ in 0..n {
            let bit = self.bit_in(&mut state, &mut models[node]);
            node = node * 2 + usize::from(bit);
        }
        (self.range, self.code) = state;
        (node - (1 << n)) as u32
    }
}

/// The examples of crate-private items, run as unit tests.
/// Encodes the low `n` bits of `value` (n < 64) with probability 1/2 each.
pub(crate) fn encode_low(enc: &mut BinaryEncoder, value: u64, n: u32) {
    if n > 32 {
        enc.encode_direct((value >> 32) as u32, n - 32);
        enc.encode_direct(value as u32, 32);
    } else {
        enc.encode_direct(value as u32, n);
    }
}

/// Decodes what [`encode_low`] wrote.
pub(crate) fn decode_low(dec: &mut BinaryDecoder<'_>, n: u32) -> u64 {
    if n > 32 {
        (u64::from(dec.decode_direct(n - 32)) << 32) | u64::from(dec.decode_direct(32))
    } else {
        u64::from(dec.decode_direct(n))
    }
}

#[cfg(test)]
mod examples {
    #[test]
    fn example_binary_bitmodel_warm() {
        use crate::coder::{BinaryDecoder, BinaryEncoder, BitModel};

        let bits = [true, true, true, false, true];
        let (mut warm, mut plain) = (BitModel::warm(), BitModel::default());
        let (mut a, mut b) = (BinaryEncoder::new(), BinaryEncoder::new());
        for &bit in &bits {
            a.encode_bit(&mut warm, bit);
            b.encode_bit(&mut plain, bit);
        }
        let (a, b) = (a.finish(), b.finish());
        let mut model = BitModel::warm();
        let mut dec = BinaryDecoder::new(&a);
        assert!(bits.iter().all(|&bit| dec.decode_bit(&mut model) == bit));
        assert_ne!(a, b);
    }

    #[test]
    fn example_binary_binaryencoder() {
        use crate::coder::{BinaryDecoder, BinaryEncoder, BitModel};

        let mut models = vec![BitModel::default(); 16];
        let mut enc = BinaryEncoder::new();
        for v in [3u32, 3, 3, 7, 0] {
            enc.encode_tree(&mut models, 4, v);
        }
        enc.encode_direct(12345, 20);
        let bytes = enc.finish();

        let mut models = vec![BitModel::default(); 16];
        let mut dec = BinaryDecoder::new(&bytes);
        let out: Vec<u32> = (0..5).map(|_| dec.decode_tree(&mut models, 4)).collect();
        assert_eq!(out, [3, 3, 3, 7, 0]);
        assert_eq!(dec.decode_direct(20), 12345);
    }

    /// A short ending reads back whatever was coded (sure and unsure
    /// bits, from none to thousands), is four bytes shorter, and is not
    /// read past its end by more than the decoder allows.
    #[test]
    fn a_short_ending_reads_back_in_four_bytes_fewer() {
        use crate::coder::{BinaryDecoder, BinaryEncoder, BitModel};

        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        for case in 0..400 {
            let n = case * 7 % 3000;
            let skew = case % 5;
            let bits: Vec<bool> = (0..n)
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    state % 8 < skew as u64
                })
                .collect();
            let (mut long, mut short) = (BinaryEncoder::new(), BinaryEncoder::new());
            let (mut m1, mut m2) = (BitModel::default(), BitModel::default());
            for &b in &bits {
                long.encode_bit(&mut m1, b);
                short.encode_bit(&mut m2, b);
            }
            let (long, short) = (long.finish(), short.finish_short());
            assert_eq!(short.len() + 4, long.len(), "case {case}");
            let mut model = BitModel::default();
            let mut dec = BinaryDecoder::new_short(&short);
            assert!(
                bits.iter().all(|&b| dec.decode_bit(&mut model) == b),
                "case {case}"
            );
            assert!(!dec.overrun(), "case {case}");
        }
    }
}
