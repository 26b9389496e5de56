//! The hashes that name files and keys: FNV-1a over bytes and over 64-bit
//! words. Fixed functions (no seed), the same on every machine: formats
//! record them (model and table hashes, the held-out split).

/// FNV-1a's starting state.
pub(crate) const FNV_BASIS: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0100_0000_01b3;

/// FNV-1a, 64 bits.
pub(crate) fn fnv1a(bytes: &[u8]) -> u64 {
    fnv1a_from(FNV_BASIS, bytes)
}

/// FNV-1a going on from state `h` (a hash of earlier bytes, or
/// [`FNV_BASIS`]).
pub(crate) fn fnv1a_from(h: u64, bytes: &[u8]) -> u64 {
    bytes
        .iter()
        .fold(h, |h, &b| (h ^ u64::from(b)).wrapping_mul(FNV_PRIME))
}

/// FNV-1a over little-endian 64-bit words (then the last bytes one by
/// one): eight times fewer steps than byte-wise FNV-1a, for megabyte files
/// hashed (model weights, books; the embedded ones' hashes are constants
/// that a test checks against this).
pub(crate) fn file_hash(bytes: &[u8]) -> u64 {
    let mut h = FNV_BASIS;
    let mut words = bytes.chunks_exact(8);
    for w in &mut words {
        h = (h ^ crate::le::u64_at(w, 0)).wrapping_mul(FNV_PRIME);
    }
    for &b in words.remainder() {
        h = (h ^ u64::from(b)).wrapping_mul(FNV_PRIME);
    }
    h
}

/// A hasher for keys that are hashes already (Zobrist, FNV): the key
/// itself, where SipHash would hash it again.
#[derive(Default, Clone, Copy)]
pub(crate) struct KeyHasher(u64);

impl std::hash::Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = v;
    }
}

/// A map by a key that is a hash already ([`KeyHasher`]).
pub(crate) type ByHash<V> =
    std::collections::HashMap<u64, V, std::hash::BuildHasherDefault<KeyHasher>>;

/// The examples of crate-private items, run as unit tests.
#[cfg(any(feature = "train", test))]
/// The next state of a xorshift generator: a fixed pseudo-random sequence
/// (the trainer's initial weights, the tests' random inputs).
pub(crate) fn xorshift(x: &mut u64) -> u64 {
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    *x
}

#[cfg(test)]
mod examples {
    #[test]
    fn example_fnv1a() {
        assert_eq!(crate::hash::fnv1a(b""), 0xcbf29ce484222325);
    }

    #[test]
    fn example_file_hash() {
        use crate::hash::file_hash;

        assert_ne!(file_hash(b"abcdefgh1"), file_hash(b"abcdefgh2"));
    }
}
