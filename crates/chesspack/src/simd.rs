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
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
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

/// [`run`] with AVX2 where the processor has it (and plain code where it
/// does not): the AVX2 path on a processor with AVX-512.
#[cfg(test)]
pub(crate) fn run_avx2<R>(f: impl FnOnce(Width) -> R) -> R {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the processor has AVX2.
        #[allow(unsafe_code)]
        return unsafe { avx2(f) };
    }
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
/// at random). Rows 64, 128 or 256 wide (the move models') take a kernel
/// that keeps `a` in registers and sums four rows' lanes together.
#[inline(always)]
pub(crate) fn dots(
    width: Width,
    a: &[i16],
    table: &[i16],
    rows: &[u16],
    mut each: impl FnMut(u16, i32),
) {
    let k = a.len();
    #[cfg(target_arch = "x86_64")]
    #[allow(unsafe_code)]
    match (width.0, k) {
        // SAFETY (each): a `Width` of AVX-512 or AVX2 exists only where the
        // processor has it; `a` is as wide as the kernel's rows.
        (Level::Avx512, 256) => return unsafe { dots_avx512::<8>(a, table, rows, each) },
        (Level::Avx512, 128) => return unsafe { dots_avx512::<4>(a, table, rows, each) },
        (Level::Avx512, 64) => return unsafe { dots_avx512::<2>(a, table, rows, each) },
        (Level::Avx2, 256) => return unsafe { dots_avx2::<16>(a, table, rows, each) },
        (Level::Avx2, 128) => return unsafe { dots_avx2::<8>(a, table, rows, each) },
        (Level::Avx2, 64) => return unsafe { dots_avx2::<4>(a, table, rows, each) },
        _ => {}
    }
    let row = |i: u16| &table[usize::from(i) * k..][..k];
    for (j, &i) in rows.iter().enumerate() {
        if let Some(&next) = rows.get(j + PREFETCH_AHEAD) {
            prefetch(row(next));
        }
        each(i, dot(width, a, row(i)));
    }
}

/// How many rows ahead of its product [`dots`] asks for a row.
const PREFETCH_AHEAD: usize = 8;

/// [`dots`] of rows of `C` × 32 `i16`s in AVX-512: `a` in `C` registers,
/// each row's products summed in two registers, and the lanes of four
/// rows' sums added together (interleaved), not each row's alone.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx2")]
#[allow(unsafe_code)]
#[inline]
unsafe fn dots_avx512<const C: usize>(
    a: &[i16],
    table: &[i16],
    rows: &[u16],
    mut each: impl FnMut(u16, i32),
) {
    use std::arch::x86_64::{
        __m512i, _mm256_add_epi32, _mm256_setzero_si256, _mm512_add_epi32, _mm512_castsi512_si256,
        _mm512_extracti64x4_epi64, _mm512_loadu_si512, _mm512_madd_epi16, _mm512_reduce_add_epi32,
        _mm512_setzero_si512,
    };
    let k = C * 32;
    let (chunks, _) = a[..k].as_chunks::<32>();
    let mut h: [__m512i; C] = [_mm512_setzero_si512(); C];
    for (h, chunk) in h.iter_mut().zip(chunks) {
        // SAFETY: 32 `i16`s are 64 bytes, an unaligned load.
        *h = unsafe { _mm512_loadu_si512(chunk.as_ptr().cast()) };
    }
    let row = |i: u16| &table[usize::from(i) * k..][..k];
    // A row's products in one register (a macro: a closure here would not
    // be inlined, nor compiled for these instructions).
    macro_rules! sum {
        ($i:expr) => {{
            let (v, _) = row($i).as_chunks::<32>();
            macro_rules! load {
                // SAFETY: as above, loads of 64 bytes inside the row.
                ($c:expr) => {
                    unsafe { _mm512_loadu_si512(v[$c].as_ptr().cast()) }
                };
            }
            let mut even = _mm512_madd_epi16(h[0], load!(0));
            let mut odd = _mm512_setzero_si512();
            for c in (1..C).step_by(2) {
                odd = _mm512_add_epi32(odd, _mm512_madd_epi16(h[c], load!(c)));
                if c + 1 < C {
                    even = _mm512_add_epi32(even, _mm512_madd_epi16(h[c + 1], load!(c + 1)));
                }
            }
            _mm512_add_epi32(even, odd)
        }};
    }
    let (quads, rest) = rows.as_chunks::<4>();
    for (q, quad) in quads.iter().enumerate() {
        for &next in rows.iter().skip(4 * q + PREFETCH_AHEAD).take(4) {
            prefetch(row(next));
        }
        // Each row's two 256-bit halves added, then as AVX2.
        let mut four = [_mm256_setzero_si256(); 4];
        for (f, &i) in four.iter_mut().zip(quad) {
            let s = sum!(i);
            *f = _mm256_add_epi32(_mm512_castsi512_si256(s), _mm512_extracti64x4_epi64::<1>(s));
        }
        // SAFETY: the processor has AVX2 (AVX-512 implies it).
        let sums = unsafe { sum4_avx2(four) };
        for (&i, s) in quad.iter().zip(sums) {
            each(i, s);
        }
    }
    for &i in rest {
        each(i, _mm512_reduce_add_epi32(sum!(i)));
    }
}

/// The sums of the 8 lanes of each of four vectors: their lanes
/// interleaved and added (in each 128-bit lane, pairs of a row's lanes,
/// then the four rows' sums of that lane), then the two 128-bit lanes.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[allow(unsafe_code)]
#[inline]
unsafe fn sum4_avx2(s: [std::arch::x86_64::__m256i; 4]) -> [i32; 4] {
    use std::arch::x86_64::{
        _mm_add_epi32, _mm_storeu_si128, _mm256_add_epi32, _mm256_castsi256_si128,
        _mm256_extracti128_si256, _mm256_unpackhi_epi32, _mm256_unpackhi_epi64,
        _mm256_unpacklo_epi32, _mm256_unpacklo_epi64,
    };
    let t01 = _mm256_add_epi32(
        _mm256_unpacklo_epi32(s[0], s[1]),
        _mm256_unpackhi_epi32(s[0], s[1]),
    );
    let t23 = _mm256_add_epi32(
        _mm256_unpacklo_epi32(s[2], s[3]),
        _mm256_unpackhi_epi32(s[2], s[3]),
    );
    let u = _mm256_add_epi32(
        _mm256_unpacklo_epi64(t01, t23),
        _mm256_unpackhi_epi64(t01, t23),
    );
    let x = _mm_add_epi32(_mm256_castsi256_si128(u), _mm256_extracti128_si256::<1>(u));
    let mut out = [0i32; 4];
    // SAFETY: 4 `i32`s are 16 bytes, an unaligned store.
    unsafe { _mm_storeu_si128(out.as_mut_ptr().cast(), x) };
    out
}

/// [`dots`] of rows of `C` × 16 `i16`s in AVX2, as [`dots_avx512`]: four
/// rows' lanes summed together.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[allow(unsafe_code)]
#[inline]
unsafe fn dots_avx2<const C: usize>(
    a: &[i16],
    table: &[i16],
    rows: &[u16],
    mut each: impl FnMut(u16, i32),
) {
    use std::arch::x86_64::{
        __m256i, _mm256_add_epi32, _mm256_loadu_si256, _mm256_madd_epi16, _mm256_setzero_si256,
    };
    let k = C * 16;
    let (chunks, _) = a[..k].as_chunks::<16>();
    let mut h: [__m256i; C] = [_mm256_setzero_si256(); C];
    for (h, chunk) in h.iter_mut().zip(chunks) {
        // SAFETY: 16 `i16`s are 32 bytes, an unaligned load.
        *h = unsafe { _mm256_loadu_si256(chunk.as_ptr().cast()) };
    }
    let row = |i: u16| &table[usize::from(i) * k..][..k];
    // As in `dots_avx512`, macros rather than closures.
    macro_rules! sum {
        ($i:expr) => {{
            let (v, _) = row($i).as_chunks::<16>();
            macro_rules! load {
                // SAFETY: as above, loads of 32 bytes inside the row.
                ($c:expr) => {
                    unsafe { _mm256_loadu_si256(v[$c].as_ptr().cast()) }
                };
            }
            let mut even = _mm256_madd_epi16(h[0], load!(0));
            let mut odd = _mm256_setzero_si256();
            for c in (1..C).step_by(2) {
                odd = _mm256_add_epi32(odd, _mm256_madd_epi16(h[c], load!(c)));
                if c + 1 < C {
                    even = _mm256_add_epi32(even, _mm256_madd_epi16(h[c + 1], load!(c + 1)));
                }
            }
            _mm256_add_epi32(even, odd)
        }};
    }
    let (quads, rest) = rows.as_chunks::<4>();
    for (q, quad) in quads.iter().enumerate() {
        for &next in rows.iter().skip(4 * q + PREFETCH_AHEAD).take(4) {
            prefetch(row(next));
        }
        let four = [sum!(quad[0]), sum!(quad[1]), sum!(quad[2]), sum!(quad[3])];
        // SAFETY: the processor has AVX2 (this function's feature).
        let sums = unsafe { sum4_avx2(four) };
        for (&i, s) in quad.iter().zip(sums) {
            each(i, s);
        }
    }
    for &i in rest {
        let zero = _mm256_setzero_si256();
        let four = [sum!(i), zero, zero, zero];
        // SAFETY: as above.
        let [sum, ..] = unsafe { sum4_avx2(four) };
        each(i, sum);
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

    /// [`dots`] gives every row's [`dot`] in the order asked, at every
    /// width and for the kernels' widths (64, 128, 256) and others, with
    /// fewer rows than a kernel's group of four and more, rows repeated.
    #[test]
    fn dots_of_rows_are_their_dots() {
        for k in [64, 128, 256, 96, 48] {
            let a: Vec<i16> = (0..k).map(|i| (i * 53 % 129) as i16).collect();
            let table: Vec<i16> = (0..k as i64 * 40)
                .map(|i| (i * 7919 % 65_536 - 32_768) as i16)
                .collect();
            for n in [0, 1, 3, 4, 5, 11, 33] {
                let rows: Vec<u16> = (0..n).map(|j| (j * 17 % 40) as u16).collect();
                let expected: Vec<(u16, i32)> = rows
                    .iter()
                    .map(|&i| {
                        let row = &table[usize::from(i) * k..][..k];
                        let d = a
                            .iter()
                            .zip(row)
                            .map(|(&x, &y)| i32::from(x) * i32::from(y))
                            .sum();
                        (i, d)
                    })
                    .collect();
                let of = |w: Width| {
                    let mut got = Vec::new();
                    dots(w, &a, &table, &rows, |i, d| got.push((i, d)));
                    got
                };
                assert_eq!(run(of), expected, "{k} wide, {n} rows");
                assert_eq!(run_avx2(of), expected, "{k} wide, {n} rows, AVX2");
                assert_eq!(run_plain(of), expected, "{k} wide, {n} rows, plain");
            }
        }
    }

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
