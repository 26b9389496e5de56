//! Fitting the move model: maximum likelihood of the moves played, by
//! AdaGrad over positions in a fixed order (reproducible on a machine).

use shakmaty::{Chess, Move, Position};

use super::{Context, Features, N_FEATURES, SCALE, Weights};

/// Fits the move model one position at a time.
pub(crate) struct Trainer {
    w: Vec<f64>,
    g2: Vec<f64>,
    grad: Vec<f64>,
    touched: Vec<usize>,
    feats: Vec<Features>,
    /// Learning rate of AdaGrad.
    pub(crate) rate: f64,
    /// L2 penalty per step.
    pub(crate) l2: f64,
    /// The hidden layer, when there is one.
    hidden: Option<Hidden>,
    inputs: super::Inputs,
    /// The context of the game being trained on.
    game: super::GameContext,
    /// The move features trained on.
    set: super::FeatureSet,
}

/// One AdaGrad step of the hidden layer's weight `w` along gradient `g`,
/// `g2` its sum of squared gradients.
#[inline]
fn adagrad(w: &mut f32, g2: &mut f32, g: f32, rate: f32) {
    *g2 += g * g;
    *w -= rate * g / g2.sqrt();
}

/// `Σ a_j · b_j` summed in 8 lanes, then the lanes in order: a fixed order
/// (so the same bits on every machine) that the compiler vectorises, where
/// a sum from first to last is one long chain of dependent additions.
fn dot8(a: &[f32], b: &[f32]) -> f32 {
    let (a8, a_rest) = a.as_chunks::<8>();
    let (b8, b_rest) = b[..a.len().min(b.len())].as_chunks::<8>();
    let mut lanes = [0f32; 8];
    for (x, y) in a8.iter().zip(b8) {
        for ((l, &x), &y) in lanes.iter_mut().zip(x).zip(y) {
            *l += x * y;
        }
    }
    let tail: f32 = a_rest.iter().zip(b_rest).map(|(x, y)| x * y).sum();
    lanes.iter().sum::<f32>() + tail
}

/// A hidden layer: `h = clamp(b + Σ U[input], 0, 1)` from the position's
/// sparse inputs; every move feature `f` adds `V[f] · h` to its weight.
struct Hidden {
    size: usize,
    u: Vec<f32>,
    u_g2: Vec<f32>,
    b: Vec<f32>,
    b_g2: Vec<f32>,
    v: Vec<f32>,
    v_g2: Vec<f32>,
    acc: Vec<f32>,
    h: Vec<f32>,
    dh: Vec<f32>,
    /// `V[f] · h` for the features touched in this position.
    eff: Vec<f32>,
    rate: f32,
}

impl Default for Trainer {
    fn default() -> Trainer {
        Trainer::new()
    }
}

impl Trainer {
    /// All weights of the `model` codec zero.
    pub(crate) fn new() -> Trainer {
        Trainer::with_features(N_FEATURES)
    }

    /// All of `n` weights zero.
    pub(crate) fn with_features(n: usize) -> Trainer {
        Trainer {
            w: vec![0.0; n],
            g2: vec![1e-2; n],
            grad: vec![0.0; n],
            touched: Vec::new(),
            feats: Vec::new(),
            rate: 0.05,
            l2: 1e-7,
            hidden: None,
            inputs: super::Inputs::new(&Chess::default(), &[]),
            game: super::GameContext::new(),
            set: super::FeatureSet::Full,
        }
    }

    /// This trainer, on the move features of `set` (every feature until
    /// set).
    pub(crate) fn with_feature_set(self, set: super::FeatureSet) -> Trainer {
        Trainer { set, ..self }
    }

    /// The `model` codec's weights zero and a hidden layer of `size` units
    /// (at most [`MAX_HIDDEN`](super::MAX_HIDDEN)) that learns at `rate`,
    /// its input weights drawn from a fixed seed.
    ///
    /// # Panics
    ///
    /// When `size` is over [`MAX_HIDDEN`](super::MAX_HIDDEN).
    pub(crate) fn with_hidden(size: usize, rate: f32) -> Trainer {
        assert!(
            size <= super::MAX_HIDDEN,
            "at most {} hidden units",
            super::MAX_HIDDEN
        );
        let mut t = Trainer::new();
        let n = t.w.len();
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next =
            || (crate::hash::xorshift(&mut seed) >> 11) as f32 / (1u64 << 53) as f32 * 2.0 - 1.0;
        let u = (0..super::N_INPUTS * size).map(|_| next() * 0.05).collect();
        t.hidden = Some(Hidden {
            size,
            u,
            u_g2: vec![1e-2; super::N_INPUTS * size],
            b: vec![0.5; size],
            b_g2: vec![1e-2; size],
            v: vec![0.0; n * size],
            v_g2: vec![1e-2; n * size],
            acc: vec![0.0; size],
            h: vec![0.0; size],
            dh: vec![0.0; size],
            eff: vec![0.0; n],
            rate,
        });
        t
    }

    /// Sets the context of the game the next steps are on (an unknown
    /// context until set).
    pub(crate) fn set_game(&mut self, game: &super::GameContext) {
        self.game = game.clone();
    }

    #[cfg(test)]
    /// One gradient step on the move `played` in `pos` (reached by
    /// `history`); returns its cost in bits before the step (0 when forced).
    ///
    /// `book` is the book counted from the training games, this one
    /// included: its count of `played` is left out here.
    pub(crate) fn step(
        &mut self,
        pos: &Chess,
        history: &[Move],
        played: Move,
        book: Option<&super::book::Book>,
    ) -> f64 {
        self.step_with(pos, history, played, book, true)
    }

    /// One step of AdaGrad on `played` in `pos` after `history`, with the
    /// opening book's counts as features; returns the ply's cost in bits
    /// before the step. For a game that `book` counted (`counted`: its
    /// count of `played` is left out) or did not (a game trained on but not
    /// in the book: the book is used as it is).
    pub(crate) fn step_with(
        &mut self,
        pos: &Chess,
        history: &[Move],
        played: Move,
        book: Option<&super::book::Book>,
        counted: bool,
    ) -> f64 {
        let legal = pos.legal_moves();
        if legal.len() < 2 {
            return 0.0;
        }
        let entry = book.and_then(|b| b.get(pos));
        // The book counted this game's early moves: leave them out.
        let exclude = (counted && history.len() < super::book::MAX_PLY).then_some(played);
        let ctx = Context::new(pos, history, entry, exclude).with_set(self.set);
        if self.hidden.is_some() {
            self.inputs = super::Inputs::in_context(pos, history, &self.game);
        }
        self.feats.resize_with(legal.len(), Features::default);
        let mut played_i = None;
        for (i, &m) in legal.iter().enumerate() {
            ctx.features(pos, m, &mut self.feats[i]);
            if m == played {
                played_i = Some(i);
            }
        }
        match played_i {
            Some(i) => self.fit(legal.len(), i),
            None => 0.0,
        }
    }

    /// One gradient step of the `fast` codec's model.
    pub(crate) fn step_fast(&mut self, pos: &Chess, history: &[Move], played: Move) -> f64 {
        let legal = pos.legal_moves();
        if legal.len() < 2 {
            return 0.0;
        }
        let ctx = super::fast::FastContext::new(pos, history);
        self.feats.resize_with(legal.len(), Features::default);
        let mut played_i = None;
        for (i, &m) in legal.iter().enumerate() {
            ctx.features(m, &mut self.feats[i]);
            if m == played {
                played_i = Some(i);
            }
        }
        match played_i {
            Some(i) => self.fit(legal.len(), i),
            None => 0.0,
        }
    }

    /// A step on the features in `self.feats[..n]`, move `played_i` played.
    fn fit(&mut self, n: usize, played_i: usize) -> f64 {
        // The features touched, once each.
        for i in 0..n {
            for &f in self.feats[i].active() {
                let f = usize::from(f);
                if self.grad[f] == 0.0 {
                    self.grad[f] = f64::MIN_POSITIVE;
                    self.touched.push(f);
                }
            }
        }
        if let Some(hd) = &mut self.hidden {
            let k = hd.size;
            hd.acc.copy_from_slice(&hd.b);
            for &p in self.inputs.active() {
                let row = &hd.u[usize::from(p) * k..][..k];
                for (a, u) in hd.acc.iter_mut().zip(row) {
                    *a += u;
                }
            }
            for (h, a) in hd.h.iter_mut().zip(&hd.acc) {
                *h = a.clamp(0.0, 1.0);
            }
            for &f in &self.touched {
                let row = &hd.v[f * k..][..k];
                hd.eff[f] = dot8(row, &hd.h);
            }
        }
        let mut scores = Vec::with_capacity(n);
        for i in 0..n {
            scores.push(
                self.feats[i]
                    .active()
                    .iter()
                    .map(|&f| {
                        let f = usize::from(f);
                        self.w[f] + self.hidden.as_ref().map_or(0.0, |hd| f64::from(hd.eff[f]))
                    })
                    .sum::<f64>(),
            );
        }
        let best = scores.iter().copied().fold(f64::MIN, f64::max);
        let exps: Vec<f64> = scores.iter().map(|s| (s - best).exp()).collect();
        let z: f64 = exps.iter().sum();
        let cost = -(exps[played_i] / z).log2();
        for &f in &self.touched {
            self.grad[f] = 0.0;
        }
        for (i, e) in exps.iter().enumerate() {
            let g = e / z - if i == played_i { 1.0 } else { 0.0 };
            for &f in self.feats[i].active() {
                self.grad[usize::from(f)] += g;
            }
        }
        if let Some(hd) = &mut self.hidden {
            let k = hd.size;
            hd.dh.iter_mut().for_each(|d| *d = 0.0);
            let rate = hd.rate;
            for &f in &self.touched {
                let g = self.grad[f] as f32;
                let row = &mut hd.v[f * k..][..k];
                let g2 = &mut hd.v_g2[f * k..][..k];
                // Zipped, not indexed: no bounds checks, so the compiler
                // vectorises it (the same arithmetic per element, so the
                // same bits).
                for (((d, w), s), &h) in hd.dh.iter_mut().zip(row).zip(g2).zip(&hd.h) {
                    *d += g * *w;
                    adagrad(w, s, g * h, rate);
                }
            }
            for j in 0..k {
                if hd.acc[j] <= 0.0 || hd.acc[j] >= 1.0 {
                    hd.dh[j] = 0.0;
                }
            }
            for &p in self.inputs.active() {
                let row = &mut hd.u[usize::from(p) * k..][..k];
                let g2 = &mut hd.u_g2[usize::from(p) * k..][..k];
                for ((w, s), &d) in row.iter_mut().zip(g2).zip(&hd.dh) {
                    adagrad(w, s, d, rate);
                }
            }
            for ((w, s), &d) in hd.b.iter_mut().zip(&mut hd.b_g2).zip(&hd.dh) {
                adagrad(w, s, d, rate);
            }
        }
        for &f in &self.touched {
            let g = self.grad[f] + self.l2 * self.w[f];
            self.g2[f] += g * g;
            self.w[f] -= self.rate * g / self.g2[f].sqrt();
            self.grad[f] = 0.0;
        }
        self.touched.clear();
        cost
    }

    /// The weights rounded to the model's fixed point.
    pub(crate) fn weights(&self) -> Weights {
        let w = self.fixed_point();
        let Some(hd) = &self.hidden else {
            return Weights::from_values(w)
                .expect("one weight per feature")
                .with_set(self.set);
        };
        let scale = f64::from(SCALE);
        let i16s = |x: &[f32]| -> Vec<i16> {
            x.iter()
                .map(|&v| (f64::from(v) * scale).round().clamp(-32767.0, 32767.0) as i16)
                .collect()
        };
        let b =
            hd.b.iter()
                .map(|&v| (f64::from(v) * scale).round() as i32)
                .collect();
        Weights::with_hidden(w, b, i16s(&hd.u), i16s(&hd.v))
            .expect("sizes of the model")
            .with_set(self.set)
    }

    /// The linear weights in 1/`SCALE` nats.
    pub(crate) fn fixed_point(&self) -> Vec<i32> {
        self.w
            .iter()
            .map(|&v| (v * f64::from(SCALE)).round() as i32)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dot8_sums_every_product_in_its_fixed_order() {
        // Small integers: every order gives the exact sum.
        for n in [0, 1, 7, 8, 13, 64, 130] {
            let a: Vec<f32> = (0..n).map(|i| (i % 7) as f32 - 3.0).collect();
            let b: Vec<f32> = (0..n).map(|i| (i % 5) as f32).collect();
            let exact: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
            assert_eq!(dot8(&a, &b), exact, "{n}");
        }
        // The order is the lanes' (element j into lane j mod 8), not left
        // to right: 1e8 and −1e8 cancel in lane 0 and keep the 1 of lane
        // 1, which a left-to-right sum rounds away (1e8 + 1 = 1e8 in f32).
        let mut a = vec![0f32; 16];
        (a[0], a[1], a[8]) = (1e8, 1.0, -1e8);
        let b = vec![1f32; 16];
        assert_eq!(a.iter().sum::<f32>(), 0.0);
        assert_eq!(dot8(&a, &b), 1.0);
    }
}

/// The examples of crate-private items, run as unit tests.
#[cfg(test)]
mod examples {
    #[test]
    fn example_train_trainer_with_hidden() {
        use crate::model::train::Trainer;
        use shakmaty::{Chess, san::San};

        let mut t = Trainer::with_hidden(8, 0.02);
        let pos = Chess::default();
        let d4 = "d4".parse::<San>().unwrap().to_move(&pos).unwrap();
        let before = t.step(&pos, &[], d4, None);
        for _ in 0..20 {
            t.step(&pos, &[], d4, None);
        }
        assert!(t.step(&pos, &[], d4, None) < before);
        assert_eq!(t.weights().hidden_units(), 8);
    }
}

/// The examples of the training code, run as unit tests (the items are
/// crate-private: `train::fit` is their public door).
#[cfg(all(test, feature = "train"))]
mod train_examples {
    #[test]
    fn example_trainer() {
        use crate::model::train::Trainer;
        use shakmaty::{Chess, san::San};

        let mut t = Trainer::default();
        let pos = Chess::default();
        let e4 = "e4".parse::<San>().unwrap().to_move(&pos).unwrap();
        let before = t.step_with(&pos, &[], e4, None, false);
        for _ in 0..20 {
            t.step_with(&pos, &[], e4, None, false);
        }
        assert!(t.step_with(&pos, &[], e4, None, false) < before);
    }
}
