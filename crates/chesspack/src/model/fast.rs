//! The `fast` codec's model: a softmax over features that need no attack
//! maps — piece × origin × target (relative to the mover), capture victim ×
//! attacker, promotion piece, recapture on the opponent's last target.
//!
//! File format (`fast.bin`): magic `CPKF`, version (u32), count (u32),
//! little-endian `i32` weights in 1/1024 nats.

#[cfg(test)]
use shakmaty::Role;
#[cfg(any(test, feature = "train"))]
use shakmaty::Square;
use shakmaty::{Chess, Color, Move, Position};

#[cfg(any(test, feature = "train"))]
use super::Features;
use crate::Error;

const FROM_TO: usize = 0; // role × from × to
const CAPTURE: usize = FROM_TO + 6 * 64 * 64; // victim × attacker
const PROMOTION: usize = CAPTURE + 6 * 6; // role
const RECAPTURE: usize = PROMOTION + 6; // role
/// The number of features of the fast model.
pub(crate) const N_FAST_FEATURES: usize = RECAPTURE + 6;

/// Magic bytes of a fast model file.
pub(crate) const MAGIC: &[u8; 4] = b"CPKF";
const VERSION: u32 = 1;

static FAST_FILE: &[u8] = include_bytes!("fast.bin");

/// What the fast features need of a position.
pub(crate) struct FastContext {
    /// 0 for white, 56 (the rank bits) for black.
    #[cfg_attr(not(any(test, feature = "train")), allow(dead_code))]
    flip_square: usize,
    /// The same on both squares of `from · 64 + to`.
    flip: usize,
    /// The square the opponent's last move went to (64: none).
    their_last: usize,
}

impl FastContext {
    /// The context of `pos` reached by `history`.
    pub(crate) fn new(pos: &Chess, history: &[Move]) -> FastContext {
        let flip_square = if pos.turn() == Color::White { 0 } else { 56 };
        FastContext {
            flip_square,
            flip: (flip_square << 6) | flip_square,
            their_last: history
                .last()
                .map_or(64, |&m| usize::from(crate::order::target(m))),
        }
    }

    #[cfg(any(test, feature = "train"))]
    #[inline]
    fn relative(&self, sq: Square) -> usize {
        usize::from(sq) ^ self.flip_square
    }

    /// The score of `m` (the sum of the weights of its features, as over
    /// [`FastContext::features`]) and its key in [`crate::order::Order::Thesis`],
    /// with one look at the move.
    #[inline]
    fn score_and_key(&self, t: &Tables, m: Move) -> (i32, u32) {
        use crate::order::{THESIS_FROM, THESIS_KEY, THESIS_TO, promotion_key};
        match m {
            // Nearly every move: its own arm, straight-line.
            Move::Normal {
                role,
                from,
                capture,
                to,
                promotion,
            } => {
                let r = role as usize - 1;
                let (from, to) = (usize::from(from), usize::from(to));
                let from_to = (from << 6) | to;
                // (r · 64 + relative(from)) · 64 + relative(to), masked so
                // that no bounds check is needed (the table is padded to 8
                // roles); the key of an origin and target in one look.
                let mut s = t.from_to[((r << 12) | (from_to ^ self.flip)) & 0x7fff];
                let mut key = THESIS_KEY[from_to & 0xfff];
                if let Some(victim) = capture {
                    s += t.capture[((victim as usize - 1) * 6 + r) & 63];
                    if self.their_last == to {
                        s += t.recapture[r & 7];
                    }
                }
                if let Some(p) = promotion {
                    s += t.promotion[(p as usize - 1) & 7];
                    key |= promotion_key(promotion);
                }
                (s, key)
            }
            Move::EnPassant { from, to } => {
                let (from, to) = (usize::from(from), usize::from(to));
                let from_to = (from << 6) | to;
                let mut s = t.from_to[from_to ^ self.flip];
                s += t.capture[0];
                if self.their_last == to {
                    s += t.recapture[0];
                }
                (s, THESIS_KEY[from_to & 0xfff])
            }
            Move::Castle { king, rook } => {
                let from_to = (usize::from(king) << 6) | usize::from(rook);
                let s = t.from_to[((5 << 12) | (from_to ^ self.flip)) & 0x7fff];
                (s, THESIS_KEY[from_to & 0xfff])
            }
            // A drop: the features place its origin on its target; its key's
            // origin is 64.
            Move::Put { role, to } => {
                let (r, to) = (role as usize - 1, usize::from(to));
                let s = t.from_to[((r << 12) | (((to << 6) | to) ^ self.flip)) & 0x7fff];
                (s, THESIS_FROM[64] | THESIS_TO[to & 63])
            }
        }
    }

    #[cfg(any(test, feature = "train"))]
    /// The features of `m`.
    pub(crate) fn features(&self, m: Move, f: &mut Features) {
        f.clear();
        let r = m.role() as usize - 1;
        let to = crate::order::target(m);
        let from = m.from().unwrap_or(to);
        f.push_index(FROM_TO + (r * 64 + self.relative(from)) * 64 + self.relative(to));
        if let Some(victim) = m.capture() {
            f.push_index(CAPTURE + (victim as usize - 1) * 6 + r);
            if self.their_last == usize::from(to) {
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
pub(crate) struct FastWeights {
    t: Box<Tables>,
}

/// The weights, and the same split by feature into tables padded to
/// powers of two (indexes are masked, not bounds-checked).
#[derive(Clone, Debug, PartialEq, Eq)]
struct Tables {
    w: [i32; N_FAST_FEATURES],
    from_to: [i32; 8 * 64 * 64],
    capture: [i32; 64],
    recapture: [i32; 8],
    promotion: [i32; 8],
}

impl FastWeights {
    /// Weights from values, one per feature.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidData`] unless there are [`N_FAST_FEATURES`].
    pub(crate) fn from_values(w: Vec<i32>) -> Result<FastWeights, Error> {
        if w.len() != N_FAST_FEATURES {
            return Err(Error::InvalidData(format!(
                "{} weights, expected {N_FAST_FEATURES}",
                w.len()
            )));
        }
        // 230 kB: fine on any thread's stack, even unoptimised.
        let mut t = Box::new(Tables {
            w: [0; N_FAST_FEATURES],
            from_to: [0; 8 * 64 * 64],
            capture: [0; 64],
            recapture: [0; 8],
            promotion: [0; 8],
        });
        t.w.copy_from_slice(&w);
        t.from_to[..CAPTURE].copy_from_slice(&w[FROM_TO..CAPTURE]);
        t.capture[..36].copy_from_slice(&w[CAPTURE..PROMOTION]);
        t.promotion[..6].copy_from_slice(&w[PROMOTION..RECAPTURE]);
        t.recapture[..6].copy_from_slice(&w[RECAPTURE..]);
        Ok(FastWeights { t })
    }

    /// Reads a fast model file.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidData`] for a bad magic, version or size.
    pub(crate) fn from_bytes(bytes: &[u8]) -> Result<FastWeights, Error> {
        super::read_weights_file(bytes, MAGIC, VERSION, N_FAST_FEATURES, "fast model file")
            .and_then(FastWeights::from_values)
    }

    /// The file bytes.
    pub(crate) fn to_bytes(&self) -> Vec<u8> {
        super::weights_file(MAGIC, VERSION, &self.t.w)
    }

    /// The weights shipped in the library.
    pub(crate) fn embedded() -> &'static FastWeights {
        static EMBEDDED: std::sync::OnceLock<FastWeights> = std::sync::OnceLock::new();
        EMBEDDED.get_or_init(|| FastWeights::from_bytes(FAST_FILE).expect("embedded fast model"))
    }

    /// `crate::hash::file_hash` of the file.
    pub(crate) fn hash(&self) -> u64 {
        crate::hash::file_hash(&self.to_bytes())
    }

    #[cfg(feature = "train")]
    /// The legal moves of `pos` in canonical order and their scores.
    pub(crate) fn scores(&self, pos: &Chess, history: &[Move]) -> (shakmaty::MoveList, Vec<i32>) {
        let legal = crate::order::sorted_moves(pos, crate::order::Order::Thesis);
        let scores = self.scores_of(pos, history, &legal);
        (legal, scores)
    }

    #[cfg(feature = "train")]
    /// The scores of `moves`, legal moves of `pos`.
    pub(crate) fn scores_of(&self, pos: &Chess, history: &[Move], moves: &[Move]) -> Vec<i32> {
        let mut out = Vec::with_capacity(moves.len());
        self.scores_into(pos, history, moves, &mut out);
        out
    }

    #[cfg(feature = "train")]
    /// [`FastWeights::scores_of`] into a buffer.
    pub(crate) fn scores_into(
        &self,
        pos: &Chess,
        history: &[Move],
        moves: &[Move],
        out: &mut Vec<i32>,
    ) {
        let ctx = FastContext::new(pos, history);
        let mut f = Features::default();
        out.clear();
        out.extend(moves.iter().map(|&m| {
            ctx.features(m, &mut f);
            f.active()
                .iter()
                .map(|&i| self.t.w[usize::from(i)])
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
            let (s, k) = ctx.score_and_key(&self.t, m);
            (*score, *key) = (s, k);
            best = best.max(s);
        }
        best
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::order::{Order, key};

    /// The codec's one-look score and key agree with the feature list and
    /// the order's key for every kind of move, drops included.
    #[test]
    fn score_and_key_match_features_and_order() {
        let w = FastWeights::embedded();
        let mut f = Features::default();
        for fen in [
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
            "r3k2r/pPp2ppp/8/3pP3/8/8/P1P2PpP/R3K2R w KQkq d6 0 1",
            "r3k2r/p1p2ppp/8/8/3pP3/8/P1PP1PpP/R3K2R b KQkq e3 0 1",
        ] {
            let pos = crate::position::parse_fen(fen).expect("fen");
            let last = pos.legal_moves()[0];
            for history in [&[][..], &[last][..]] {
                let ctx = FastContext::new(&pos, history);
                let mut moves: Vec<Move> = pos.legal_moves().to_vec();
                moves.push(Move::Put {
                    role: Role::Knight,
                    to: Square::E4,
                });
                for m in moves {
                    ctx.features(m, &mut f);
                    let sum: i32 = f.active().iter().map(|&i| w.t.w[usize::from(i)]).sum();
                    assert_eq!(
                        ctx.score_and_key(&w.t, m),
                        (sum, key(m, Order::Thesis)),
                        "{m:?}"
                    );
                }
            }
        }
    }
}
