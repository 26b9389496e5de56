//! Fitting the move model: maximum likelihood of the moves played, by
//! AdaGrad over positions in a fixed order (reproducible on a machine).

use shakmaty::{Chess, Move, Position};

use super::{Context, Features, N_FEATURES, SCALE, Weights};

/// Fits the move model one position at a time.
///
/// ```
/// use chesspack::model::train::Trainer;
/// use shakmaty::{Chess, Position, san::San};
///
/// let mut t = Trainer::new();
/// let pos = Chess::default();
/// let e4 = "e4".parse::<San>().unwrap().to_move(&pos).unwrap();
/// let before = t.step(&pos, &[], e4, None);
/// for _ in 0..20 {
///     t.step(&pos, &[], e4, None);
/// }
/// assert!(t.step(&pos, &[], e4, None) < before);
/// ```
pub struct Trainer {
    w: Vec<f64>,
    g2: Vec<f64>,
    grad: Vec<f64>,
    touched: Vec<usize>,
    feats: Vec<Features>,
    /// Learning rate of AdaGrad.
    pub rate: f64,
    /// L2 penalty per step.
    pub l2: f64,
}

impl Default for Trainer {
    fn default() -> Trainer {
        Trainer::new()
    }
}

impl Trainer {
    /// All weights of the `model` codec zero.
    pub fn new() -> Trainer {
        Trainer::with_features(N_FEATURES)
    }

    /// All of `n` weights zero.
    pub fn with_features(n: usize) -> Trainer {
        Trainer {
            w: vec![0.0; n],
            g2: vec![1e-2; n],
            grad: vec![0.0; n],
            touched: Vec::new(),
            feats: Vec::new(),
            rate: 0.05,
            l2: 1e-7,
        }
    }

    /// One gradient step on the move `played` in `pos` (reached by
    /// `history`); returns its cost in bits before the step (0 when forced).
    ///
    /// `book` is the book counted from the training games, this one
    /// included: its count of `played` is left out here.
    pub fn step(
        &mut self,
        pos: &Chess,
        history: &[Move],
        played: Move,
        book: Option<&super::book::Book>,
    ) -> f64 {
        let legal = pos.legal_moves();
        if legal.len() < 2 {
            return 0.0;
        }
        let entry = book.and_then(|b| b.get(pos));
        // The book counted this game's early moves: leave them out.
        let exclude = (history.len() < super::book::MAX_PLY).then_some(played);
        let ctx = Context::new(pos, history, entry, exclude);
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
    pub fn step_fast(&mut self, pos: &Chess, history: &[Move], played: Move) -> f64 {
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
        let mut scores = Vec::with_capacity(n);
        for i in 0..n {
            scores.push(
                self.feats[i]
                    .active()
                    .iter()
                    .map(|&f| self.w[usize::from(f)])
                    .sum::<f64>(),
            );
        }
        let best = scores.iter().copied().fold(f64::MIN, f64::max);
        let exps: Vec<f64> = scores.iter().map(|s| (s - best).exp()).collect();
        let z: f64 = exps.iter().sum();
        let cost = -(exps[played_i] / z).log2();
        for (i, e) in exps.iter().enumerate() {
            let g = e / z - if i == played_i { 1.0 } else { 0.0 };
            for &f in self.feats[i].active() {
                let f = usize::from(f);
                if self.grad[f] == 0.0 {
                    self.touched.push(f);
                }
                self.grad[f] += g;
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
    pub fn weights(&self) -> Weights {
        Weights::from_values(self.fixed_point()).expect("one weight per feature")
    }

    /// The weights in 1/[`SCALE`] nats.
    pub fn fixed_point(&self) -> Vec<i32> {
        self.w
            .iter()
            .map(|&v| (v * f64::from(SCALE)).round() as i32)
            .collect()
    }
}
