//! Wider vectors where the processor has them, chosen at run time.
//!
//! [`run`] calls a closure inside a function compiled for AVX-512 or AVX2
//! when the processor has them (x86-64), handing it the [`Width`] found, so
//! that the integer loops the closure inlines (the move model's sums) are
//! vectorised at that width and [`dot`] uses those instructions; elsewhere
//! it calls the closure as it is. Every width computes the same integers
//! (sums that cannot overflow, in any order): the bits a codec writes do not
//! depend on the processor.
//!
//! This is the library's one use of `unsafe`: calling code compiled for
//! instructions that the processor has been checked to have, and loading
//! vectors from slices.

/// The vectors [`run`] found: made only there, after checking the
/// processor, so that holding one is the proof that its instructions run.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Width(Level);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Level {
    Plain,
    #[cfg(target_arch = "x86_64")]
    Avx2,
    #[cfg(target_arch = "x86_64")]
    Avx512,
}

/// Calls `f` compiled for the widest vectors this processor has (or
/// those [`widest`] is held to). `f` should be an `#[inline(always)]`
/// closure, and what it calls inlined, for the width to reach its loops.
#[inline]
pub(crate) fn run<R>(f: impl FnOnce(Width) -> R) -> R {
    match widest() {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `widest` gives AVX-512 only where the processor has F and
        // BW (BW implies F).
        #[allow(unsafe_code)]
        Level::Avx512 => unsafe { avx512(f) },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `widest` gives AVX2 only where the processor has it.
        #[allow(unsafe_code)]
        Level::Avx2 => unsafe { avx2(f) },
        Level::Plain => f(Width(Level::Plain)),
    }
}

/// The environment variable that holds [`run`] to narrower vectors than
/// the processor has: `avx2` or `plain` (any other value: no limit). For
/// timing the narrower paths on one machine; the integers, and so the
/// bits, are the same at every width.
const LIMIT_VARIABLE: &str = "CHESSPACK_VECTORS";

/// The widest vectors that this processor has and [`LIMIT_VARIABLE`]
/// allows, found once.
fn widest() -> Level {
    static WIDEST: std::sync::OnceLock<Level> = std::sync::OnceLock::new();
    *WIDEST.get_or_init(|| {
        #[cfg(target_arch = "x86_64")]
        {
            let limit = std::env::var(LIMIT_VARIABLE);
            let limit = limit.as_deref().unwrap_or("");
            if limit != "plain" {
                if limit != "avx2" && std::arch::is_x86_feature_detected!("avx512bw") {
                    return Level::Avx512;
                }
                if std::arch::is_x86_feature_detected!("avx2") {
                    return Level::Avx2;
                }
            }
        }
        Level::Plain
    })
}

/// The name of the vectors [`run`] uses: `avx512`, `avx2` or `plain`.
pub(crate) fn name() -> &'static str {
    match widest() {
        #[cfg(target_arch = "x86_64")]
        Level::Avx512 => "avx512",
        #[cfg(target_arch = "x86_64")]
        Level::Avx2 => "avx2",
        Level::Plain => "plain",
    }
}

/// [`run`] without wider vectors: what a processor without them does.
#[cfg(test)]
pub(crate) fn run_plain<R>(f: impl FnOnce(Width) -> R) -> R {
    f(Width(Level::Plain))
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx2")]
fn avx512<R>(f: impl FnOnce(Width) -> R) -> R {
    f(Width(Level::Avx512))
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn avx2<R>(f: impl FnOnce(Width) -> R) -> R {
    f(Width(Level::Avx2))
}

/// `Σ a_k · b_k` over the shorter length, for products whose sums in
/// neighbouring pairs and in total stay within `i32` (the move model's:
/// activations of at most 128 times 16-bit weights, 256 of them).
#[inline(always)]
pub(crate) fn dot(width: Width, a: &[i16], b: &[i16]) -> i32 {
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    match width.0 {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: a `Width` of AVX-512 exists only where the processor has it.
        #[allow(unsafe_code)]
        Level::Avx512 => unsafe { dot_avx512(a, b) },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: a `Width` of AVX2 exists only where the processor has it.
        #[allow(unsafe_code)]
        Level::Avx2 => unsafe { dot_avx2(a, b) },
        Level::Plain => dot_plain(a, b),
    }
}

/// [`dot`] of `a` with each of the rows of `table` (`a.len()` wide) that
/// `rows` names, handed to `each` with the row's number, in order. Rows are
/// asked for a few ahead of their products (the table is large and read
/// at random). With AVX-512 and 256-wide rows (the shipped model's), `a`
/// stays in registers for every row.
#[inline(always)]
pub(crate) fn dots(
    width: Width,
    a: &[i16],
    table: &[i16],
    rows: &[u16],
    mut each: impl FnMut(u16, i32),
) {
    let k = a.len();
    let row = |i: u16| &table[usize::from(i) * k..][..k];
    #[cfg(target_arch = "x86_64")]
    if width.0 == Level::Avx512 && k == 256 {
        let a: &[i16; 256] = a.try_into().expect("256 wide");
        // SAFETY: a `Width` of AVX-512 exists only where the processor has it.
        #[allow(unsafe_code)]
        unsafe {
            dots_256_avx512(a, table, rows, each)
        };
        return;
    }
    for (j, &i) in rows.iter().enumerate() {
        if let Some(&next) = rows.get(j + PREFETCH_AHEAD) {
            prefetch(row(next));
        }
        each(i, dot(width, a, row(i)));
    }
}

/// How many rows ahead of its product [`dots`] asks for a row.
const PREFETCH_AHEAD: usize = 8;

/// [`dots`] of 256-wide rows in AVX-512: `a` in eight registers, two
/// sums a row.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx2")]
#[allow(unsafe_code)]
#[inline]
unsafe fn dots_256_avx512(
    a: &[i16; 256],
    table: &[i16],
    rows: &[u16],
    mut each: impl FnMut(u16, i32),
) {
    use std::arch::x86_64::{
        __m512i, _mm512_add_epi32, _mm512_loadu_si512, _mm512_madd_epi16, _mm512_reduce_add_epi32,
    };
    let (chunks, _) = a.as_chunks::<32>();
    // SAFETY: 32 `i16`s are 64 bytes, an unaligned load.
    let h: [__m512i; 8] =
        std::array::from_fn(|c| unsafe { _mm512_loadu_si512(chunks[c].as_ptr().cast()) });
    let row = |i: u16| -> &[i16; 256] {
        table[usize::from(i) * 256..][..256]
            .try_into()
            .expect("256 wide")
    };
    for (j, &i) in rows.iter().enumerate() {
        if let Some(&next) = rows.get(j + PREFETCH_AHEAD) {
            prefetch(row(next));
        }
        let (v, _) = row(i).as_chunks::<32>();
        // SAFETY: as above, loads of 64 bytes inside the row.
        let load = |c: usize| unsafe { _mm512_loadu_si512(v[c].as_ptr().cast()) };
        let mut even = _mm512_madd_epi16(h[0], load(0));
        let mut odd = _mm512_madd_epi16(h[1], load(1));
        for c in (2..8).step_by(2) {
            even = _mm512_add_epi32(even, _mm512_madd_epi16(h[c], load(c)));
            odd = _mm512_add_epi32(odd, _mm512_madd_epi16(h[c + 1], load(c + 1)));
        }
        each(i, _mm512_reduce_add_epi32(_mm512_add_epi32(even, odd)));
    }
}

/// Asks for `data` to be brought into the nearest cache (a hint, for data
/// read soon after; nothing elsewhere than x86-64).
#[inline(always)]
pub(crate) fn prefetch<T>(data: &[T]) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        let bytes = std::mem::size_of_val(data);
        let start = data.as_ptr().cast::<i8>();
        for offset in (0..bytes).step_by(64) {
            // SAFETY: a prefetch reads nothing and cannot fault; the
            // address is inside `data`.
            #[allow(unsafe_code)]
            unsafe {
                _mm_prefetch::<_MM_HINT_T0>(start.add(offset))
            };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = data;
}

/// [`dot`] in plain code: 16 lanes, so that compilers vectorise it.
#[inline(always)]
fn dot_plain(a: &[i16], b: &[i16]) -> i32 {
    let (a16, a_rest) = a.as_chunks::<16>();
    let (b16, b_rest) = b.as_chunks::<16>();
    let mut lanes = [0i32; 16];
    for (x, y) in a16.iter().zip(b16) {
        for j in 0..16 {
            lanes[j] += i32::from(x[j]) * i32::from(y[j]);
        }
    }
    let mut sum: i32 = lanes.iter().sum();
    for (&x, &y) in a_rest.iter().zip(b_rest) {
        sum += i32::from(x) * i32::from(y);
    }
    sum
}

/// [`dot`] in 16 lanes of `vpmaddwd`, the rest plain; `a` and `b` of one
/// length.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[allow(unsafe_code)]
unsafe fn dot_avx2(a: &[i16], b: &[i16]) -> i32 {
    use std::arch::x86_64::{
        __m256i, _mm256_add_epi32, _mm256_loadu_si256, _mm256_madd_epi16, _mm256_setzero_si256,
        _mm256_storeu_si256,
    };
    let (a16, a_rest) = a.as_chunks::<16>();
    let (b16, b_rest) = b.as_chunks::<16>();
    let mut acc = _mm256_setzero_si256();
    for (x, y) in a16.iter().zip(b16) {
        // SAFETY: 16 `i16`s are 32 bytes, an unaligned load.
        let (x, y) = unsafe {
            (
                _mm256_loadu_si256(x.as_ptr().cast::<__m256i>()),
                _mm256_loadu_si256(y.as_ptr().cast::<__m256i>()),
            )
        };
        acc = _mm256_add_epi32(acc, _mm256_madd_epi16(x, y));
    }
    let mut lanes = [0i32; 8];
    // SAFETY: 8 `i32`s are 32 bytes, an unaligned store.
    unsafe { _mm256_storeu_si256(lanes.as_mut_ptr().cast::<__m256i>(), acc) };
    let mut sum: i32 = lanes.iter().sum();
    for (&x, &y) in a_rest.iter().zip(b_rest) {
        sum += i32::from(x) * i32::from(y);
    }
    sum
}

/// [`dot`] in 32 lanes of `vpmaddwd`, the rest as [`dot_avx2`].
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx2")]
#[allow(unsafe_code)]
unsafe fn dot_avx512(a: &[i16], b: &[i16]) -> i32 {
    use std::arch::x86_64::{
        __m512i, _mm512_add_epi32, _mm512_loadu_si512, _mm512_madd_epi16, _mm512_reduce_add_epi32,
        _mm512_setzero_si512,
    };
    let (a32, a_rest) = a.as_chunks::<32>();
    let (b32, b_rest) = b.as_chunks::<32>();
    let mut acc = _mm512_setzero_si512();
    for (x, y) in a32.iter().zip(b32) {
        // SAFETY: 32 `i16`s are 64 bytes, an unaligned load.
        let (x, y) = unsafe {
            (
                _mm512_loadu_si512(x.as_ptr().cast::<__m512i>()),
                _mm512_loadu_si512(y.as_ptr().cast::<__m512i>()),
            )
        };
        acc = _mm512_add_epi32(acc, _mm512_madd_epi16(x, y));
    }
    // SAFETY: the processor has AVX2 (AVX-512 implies it).
    _mm512_reduce_add_epi32(acc) + unsafe { dot_avx2(a_rest, b_rest) }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every width gives the sums of the plain loop, for every length
    /// (whole vectors and remainders).
    #[test]
    fn every_width_sums_alike() {
        let a: Vec<i16> = (0..300).map(|i| (i * 37 % 129) as i16).collect();
        let b: Vec<i16> = (0..300)
            .map(|i| (i * 7919 % 65_536 - 32_768) as i16)
            .collect();
        for n in [0, 1, 15, 16, 17, 31, 32, 33, 64, 100, 128, 255, 256, 300] {
            let plain: i32 = a[..n]
                .iter()
                .zip(&b[..n])
                .map(|(&x, &y)| i32::from(x) * i32::from(y))
                .sum();
            assert_eq!(run(|w| dot(w, &a[..n], &b[..n])), plain, "{n}");
            assert_eq!(run_plain(|w| dot(w, &a[..n], &b[..n])), plain, "{n}");
            // Slices of different lengths: the shorter one's.
            assert_eq!(run(|w| dot(w, &a[..n], &b)), plain, "{n}");
        }
    }
}
