//! Static Huffman codes, canonical, for the seed codecs.

use crate::{Error, bits::BitWriter};

/// A canonical Huffman code over symbols `0..n`, built from integer
/// frequencies.
///
/// Deterministic: equal weights are merged in a fixed order (leaves by
/// symbol, then internal nodes by creation), and codewords are assigned
/// canonically (shorter first, then by symbol).
#[derive(Clone, Debug)]
pub(crate) struct Huffman {
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
    pub(crate) fn from_frequencies(freqs: &[u32]) -> Huffman {
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
    pub(crate) fn length(&self, symbol: usize) -> u32 {
        self.lengths[symbol]
    }

    /// Writes the codeword of `symbol`.
    pub(crate) fn encode(&self, symbol: usize, w: &mut BitWriter) {
        w.write(self.codes[symbol], self.lengths[symbol]);
    }

    /// Reads one codeword.
    ///
    /// # Errors
    ///
    /// [`Error::Truncated`] when the bits run out inside a codeword.
    pub(crate) fn decode(&self, r: &mut crate::bits::BitReader<'_>) -> Result<usize, Error> {
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
    use super::*;

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

/// The examples of crate-private items, run as unit tests.
#[cfg(test)]
mod examples {
    #[test]
    fn example_huffman_huffman() {
        use crate::{bits::BitWriter, coder::Huffman};

        let code = Huffman::from_frequencies(&[50, 25, 13, 12]);
        assert_eq!(
            (0..4).map(|s| code.length(s)).collect::<Vec<_>>(),
            [1, 2, 3, 3]
        );
        let mut w = BitWriter::new();
        for s in [3, 0, 1] {
            code.encode(s, &mut w);
        }
        let bits = w.finish();
        let mut r = bits.reader();
        assert_eq!(
            [code.decode(&mut r).unwrap(), code.decode(&mut r).unwrap()],
            [3, 0]
        );
    }
}
