//! The `fast` codec's model: a softmax over features that need no attack
//! maps — piece × origin × target (relative to the mover), capture victim ×
//! attacker, promotion piece, recapture on the opponent's last target.
//!
//! File format (`fast.bin`): magic `CPKF`, version (u32), count (u32),
//! little-endian `i32` weights in 1/1024 nats.

use shakmaty::{Chess, Color, Move, Position, Role, Square};

use super::Features;
use crate::Error;

const FROM_TO: usize = 0; // role × from × to
const CAPTURE: usize = FROM_TO + 6 * 64 * 64; // victim × attacker
const PROMOTION: usize = CAPTURE + 6 * 6; // role
const RECAPTURE: usize = PROMOTION + 6; // role
/// The number of features of the fast model.
pub const N_FAST_FEATURES: usize = RECAPTURE + 6;

/// Magic bytes of a fast model file.
pub const MAGIC: &[u8; 4] = b"CPKF";
const VERSION: u32 = 1;

static FAST_FILE: &[u8] = include_bytes!("fast.bin");

/// What the fast features need of a position.
pub struct FastContext {
    us: Color,
    their_last: Option<Square>,
}

impl FastContext {
    /// The context of `pos` reached by `history`.
    pub fn new(pos: &Chess, history: &[Move]) -> FastContext {
        FastContext {
            us: pos.turn(),
            their_last: history.last().map(|&m| crate::order::target(m)),
        }
    }

    #[inline]
    fn relative(&self, sq: Square) -> usize {
        usize::from(sq) ^ if self.us == Color::White { 0 } else { 56 }
    }

    /// The score of `m` (the sum of the weights of its features, as over
    /// [`FastContext::features`]) and its key in [`crate::order::Order::Thesis`],
    /// with one look at the move.
    #[inline]
    fn score_and_key(&self, w: &[i32; N_FAST_FEATURES], m: Move) -> (i32, u32) {
        use crate::order::{THESIS_FROM, THESIS_TO, promotion_key};
        let (r, from, to, capture, promotion) = match m {
            Move::Normal {
                role,
                from,
                capture,
                to,
                promotion,
            } => (role as usize - 1, from, to, capture, promotion),
            Move::EnPassant { from, to } => (0, from, to, Some(Role::Pawn), None),
            Move::Castle { king, rook } => (5, king, rook, None, None),
            Move::Put { .. } => {
                // No drops in chess; the general path handles them.
                let mut f = Features::default();
                self.features(m, &mut f);
                let s = f.active().iter().map(|&i| w[usize::from(i)]).sum();
                return (s, crate::order::key(m, crate::order::Order::Thesis));
            }
        };
        let key = THESIS_FROM[usize::from(from)] | THESIS_TO[usize::from(to)];
        let mut s = w[FROM_TO + (r * 64 + self.relative(from)) * 64 + self.relative(to)];
        if let Some(victim) = capture {
            s += w[CAPTURE + (victim as usize - 1) * 6 + r];
            if self.their_last == Some(to) {
                s += w[RECAPTURE + r];
            }
        }
        if let Some(p) = promotion {
            s += w[PROMOTION + p as usize - 1];
            return (s, key | promotion_key(promotion));
        }
        (s, key)
    }

    /// The features of `m`.
    pub fn features(&self, m: Move, f: &mut Features) {
        f.clear();
        let r = m.role() as usize - 1;
        let to = crate::order::target(m);
        let from = m.from().unwrap_or(to);
        f.push_index(FROM_TO + (r * 64 + self.relative(from)) * 64 + self.relative(to));
        if let Some(victim) = m.capture() {
            f.push_index(CAPTURE + (victim as usize - 1) * 6 + r);
            if self.their_last == Some(to) {
                f.push_index(RECAPTURE + r);
            }
        }
        if let Some(p) = m.promotion() {
            f.push_index(PROMOTION + p as usize - 1);
        }
    }
}

/// The fast model's weights.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FastWeights {
    w: Box<[i32; N_FAST_FEATURES]>,
}

impl FastWeights {
    /// Weights from values, one per feature.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidData`] unless there are [`N_FAST_FEATURES`].
    pub fn from_values(w: Vec<i32>) -> Result<FastWeights, Error> {
        if w.len() != N_FAST_FEATURES {
            return Err(Error::InvalidData(format!(
                "{} weights, expected {N_FAST_FEATURES}",
                w.len()
            )));
        }
        Ok(FastWeights {
            w: w.into_boxed_slice().try_into().expect("length checked"),
        })
    }

    /// Reads a fast model file.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidData`] for a bad magic, version or size.
    pub fn from_bytes(bytes: &[u8]) -> Result<FastWeights, Error> {
        super::read_weights_file(bytes, MAGIC, VERSION, N_FAST_FEATURES, "fast model file")
            .and_then(FastWeights::from_values)
    }

    /// The file bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        super::weights_file(MAGIC, VERSION, &self.w[..])
    }

    /// The weights shipped in the library.
    pub fn embedded() -> &'static FastWeights {
        static EMBEDDED: std::sync::OnceLock<FastWeights> = std::sync::OnceLock::new();
        EMBEDDED.get_or_init(|| FastWeights::from_bytes(FAST_FILE).expect("embedded fast model"))
    }

    /// [`super::file_hash`] of the file.
    pub fn hash(&self) -> u64 {
        super::file_hash(&self.to_bytes())
    }

    /// The legal moves of `pos` in canonical order and their scores.
    pub fn scores(&self, pos: &Chess, history: &[Move]) -> (shakmaty::MoveList, Vec<i32>) {
        let legal = crate::order::sorted_moves(pos, crate::order::Order::Thesis);
        let scores = self.scores_of(pos, history, &legal);
        (legal, scores)
    }

    /// The scores of `moves`, legal moves of `pos`.
    pub fn scores_of(&self, pos: &Chess, history: &[Move], moves: &[Move]) -> Vec<i32> {
        let mut out = Vec::with_capacity(moves.len());
        self.scores_into(pos, history, moves, &mut out);
        out
    }

    /// [`FastWeights::scores_of`] into a buffer.
    pub fn scores_into(&self, pos: &Chess, history: &[Move], moves: &[Move], out: &mut Vec<i32>) {
        let ctx = FastContext::new(pos, history);
        let mut f = Features::default();
        out.clear();
        out.extend(moves.iter().map(|&m| {
            ctx.features(m, &mut f);
            f.active()
                .iter()
                .map(|&i| self.w[usize::from(i)])
                .sum::<i32>()
        }));
    }

    /// The scores of `moves`, legal moves of `pos` in any order, and their
    /// keys in [`crate::order::Order::Thesis`], into `scores` and `keys` (as
    /// long as `moves`);
    /// returns the best score (`i32::MIN` for no moves). The codec's hot
    /// path: one look at each move.
    pub(crate) fn scores_and_keys(
        &self,
        pos: &Chess,
        history: &[Move],
        moves: &[Move],
        scores: &mut [i32],
        keys: &mut [u32],
    ) -> i32 {
        let ctx = FastContext::new(pos, history);
        let mut best = i32::MIN;
        for ((&m, score), key) in moves.iter().zip(scores.iter_mut()).zip(keys.iter_mut()) {
            let (s, k) = ctx.score_and_key(&self.w, m);
            (*score, *key) = (s, k);
            best = best.max(s);
        }
        best
    }
}
