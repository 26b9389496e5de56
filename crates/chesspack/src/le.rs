//! Little-endian integers read out of byte slices: the one reader of every
//! file format's fixed-width fields (archives, model, book and table files),
//! and LEB128 numbers, written and read.
//!
//! Each reads at an offset that the caller has checked to be in range; a
//! shorter slice is a bug in the caller and panics.

/// The `N` bytes at `at`: one bounds check, where a byte at a time would
/// check each.
#[inline]
fn bytes_at<const N: usize>(b: &[u8], at: usize) -> [u8; N] {
    let mut out = [0; N];
    out.copy_from_slice(&b[at..at + N]);
    out
}

/// The `u16` at `at`.
#[inline]
pub(crate) fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes(bytes_at(b, at))
}

/// The `i16` at `at`.
#[inline]
pub(crate) fn i16_at(b: &[u8], at: usize) -> i16 {
    i16::from_le_bytes(bytes_at(b, at))
}

/// The `u32` at `at`.
#[inline]
pub(crate) fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(bytes_at(b, at))
}

/// The `i32` at `at`.
#[inline]
pub(crate) fn i32_at(b: &[u8], at: usize) -> i32 {
    i32::from_le_bytes(bytes_at(b, at))
}

/// The `u64` at `at` (the file hash reads every embedded model file with
/// it: inlined, a load a word).
#[inline]
pub(crate) fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(bytes_at(b, at))
}

/// The little-endian number of the `n` bytes (at most 8) at `at`, for a
/// table worked out when the library is compiled from an embedded file
/// (the opening book's index): the readers above made `const`
/// (slices split, then a chunk taken) took the compiler's evaluator 13.8
/// s of a library build's check, where this takes 1.2 s.
pub(crate) const fn uint_at(b: &[u8], at: usize, n: usize) -> u64 {
    let mut v = 0u64;
    let mut i = n;
    while i > 0 {
        i -= 1;
        v = (v << 8) | b[at + i] as u64;
    }
    v
}

/// Appends `v` as LEB128 (7 bits a byte, low first): the position and
/// training archives' numbers.
pub(crate) fn write_leb(out: &mut Vec<u8>, mut v: u64) {
    loop {
        let b = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out.push(b);
            return;
        }
        out.push(b | 0x80);
    }
}

/// The LEB128 number at the front of `data`, which moves past it; an
/// error when the bytes end first or it runs past 64 bits.
#[inline]
pub(crate) fn take_leb(data: &mut &[u8]) -> Result<u64, String> {
    // Most are one byte (a block's tag ids, counts).
    if let Some((&b, rest)) = data.split_first()
        && b < 0x80
    {
        *data = rest;
        return Ok(u64::from(b));
    }
    let mut at = 0;
    let v = read_leb(data, &mut at).ok_or("a number is cut short or too long")?;
    *data = &data[at..];
    Ok(v)
}

/// The LEB128 number at `*at`, moving `at` past it; `None` when the bytes
/// end first or it runs past 64 bits.
pub(crate) fn read_leb(data: &[u8], at: &mut usize) -> Option<u64> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let b = *data.get(*at)?;
        *at += 1;
        v |= u64::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            return Some(v);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_read_as_the_formats_write_them() {
        let b: Vec<u8> = (1..=12).collect();
        assert_eq!(u16_at(&b, 1), u16::from_le_bytes([2, 3]));
        assert_eq!(i16_at(&[0xff, 0xff], 0), -1);
        assert_eq!(u32_at(&b, 2), u32::from_le_bytes([3, 4, 5, 6]));
        assert_eq!(i32_at(&(-5i32).to_le_bytes(), 0), -5);
        assert_eq!(
            u64_at(&b, 4),
            u64::from_le_bytes([5, 6, 7, 8, 9, 10, 11, 12])
        );
        assert_eq!(u64_at(&u64::MAX.to_le_bytes(), 0), u64::MAX);
    }

    #[test]
    #[should_panic]
    fn a_short_slice_is_a_bug() {
        u32_at(&[1, 2, 3], 0);
    }
}
