//! Range coding with integer probabilities: the streams of constriction's
//! range coder.
//!
//! Probabilities are 24-bit fixed point: every symbol's frequency is at least
//! 1 and they sum to exactly `1 << 24`. Encoding and decoding are integer-only
//! and therefore identical on every platform and build.
//!
//! [`Encoder`] and [`Decoder`] write and read the words of constriction's
//! `DefaultRangeEncoder` and `DefaultRangeDecoder` (the unit tests run
//! constriction's on the same symbols and bytes), in code small enough to
//! inline into the codecs' loops and without a division per decoded symbol:
//! the position codec spends its time there. The encoder ends its stream
//! with as few bits as identify the final range (the decoder reads missing
//! bits as zeros), instead of constriction's one or two whole 32-bit words,
//! which matters for messages of a hundred bits.

mod binary;
mod huffman;
mod quantize;
mod range;

pub(crate) use binary::{BinaryDecoder, BinaryEncoder, BitModel, decode_low, encode_low};
pub(crate) use huffman::Huffman;
pub(crate) use quantize::{Model, quantize, quantize_fast};
pub(crate) use quantize::{fast_scale, scaled};
pub(crate) use range::{Decoder, Encoder};

/// Fixed-point precision of probabilities, in bits.
pub(crate) const PRECISION: u32 = 24;
