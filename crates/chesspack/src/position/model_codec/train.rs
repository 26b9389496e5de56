//! Fitting [`PositionWeights`] on positions.

use shakmaty::{Chess, Color, Position};

use super::{LANES, LEAF, NODES, PositionWeights, ROWS, TREE, kings, turn_is_forced, walk};
use crate::model::SCALE;

/// Fits [`PositionWeights`] on positions: king counts by counting, rows by
/// AdaGrad on the log loss of every square, in the order positions come.
#[derive(Debug)]
pub(crate) struct PositionTrainer {
    white_king: Vec<u32>,
    black_king: Vec<u32>,
    turn: [u32; 2],
    w: Vec<[f32; LANES]>,
    g: Vec<[f32; LANES]>,
    rate: f32,
    loss: f64,
    positions: u64,
}

impl Default for PositionTrainer {
    fn default() -> Self {
        PositionTrainer::new()
    }
}

impl PositionTrainer {
    /// An untrained model with AdaGrad's step size `rate`.
    pub(crate) fn with_rate(rate: f32) -> PositionTrainer {
        PositionTrainer {
            rate,
            ..PositionTrainer::new()
        }
    }

    /// An untrained model.
    pub(crate) fn new() -> PositionTrainer {
        PositionTrainer {
            white_king: vec![0; 64],
            black_king: vec![0; 64 * 64],
            turn: [0; 2],
            w: vec![[0.0; LANES]; ROWS],
            g: vec![[1e-6; LANES]; ROWS],
            rate: 0.1,
            loss: 0.0,
            positions: 0,
        }
    }

    /// Counts the king squares and side to move of `pos` (one pass).
    pub(crate) fn count(&mut self, pos: &Chess) {
        if let Ok((wk, bk)) = kings(pos.board()) {
            self.white_king[wk as usize] += 1;
            self.black_king[wk as usize * 64 + bk as usize] += 1;
        }
        if let Ok(false) = turn_is_forced(pos) {
            self.turn[usize::from(pos.turn() == Color::Black)] += 1;
        }
    }

    /// One gradient step on every square of `pos`; returns its cost in
    /// bits under the weights before the step.
    pub(crate) fn step(&mut self, pos: &Chess) -> f64 {
        let mut bits = 0.0;
        let (w, g, rate) = (&mut self.w, &mut self.g, self.rate);
        let _ = walk(pos, |ev| {
            let mut l = [0f32; LANES];
            for &r in &ev.rows {
                for (a, b) in l.iter_mut().zip(&w[usize::from(r)]) {
                    *a += b;
                }
            }
            let mut grad = [0f32; LANES];
            // Occupancy: logistic.
            let p = 1.0 / (1.0 + (-l[0]).exp());
            let y = if ev.symbol.is_some() { 1.0 } else { 0.0 };
            grad[0] = p - y;
            bits -= f64::from(if y > 0.5 { p } else { 1.0 - p })
                .max(1e-12)
                .log2();
            if let Some(s) = ev.symbol {
                // Logistic at each node of the piece tree the mask leaves open.
                let mut node = 0;
                loop {
                    let (left, right, left_child, right_child) = TREE[node];
                    let right_side = right >> s & 1 == 1;
                    if left & ev.mask != 0 && right & ev.mask != 0 {
                        let p = 1.0 / (1.0 + (-l[1 + node]).exp());
                        let y = if right_side { 1.0 } else { 0.0 };
                        grad[1 + node] = p - y;
                        bits -= f64::from(if right_side { p } else { 1.0 - p })
                            .max(1e-12)
                            .log2();
                    }
                    let child = if right_side { right_child } else { left_child };
                    if child >= LEAF {
                        break;
                    }
                    node = usize::from(child);
                }
            }
            for &r in &ev.rows {
                let (wr, gr) = (&mut w[usize::from(r)], &mut g[usize::from(r)]);
                for k in 0..=NODES {
                    if grad[k] != 0.0 {
                        gr[k] += grad[k] * grad[k];
                        wr[k] -= rate * grad[k] / gr[k].sqrt();
                    }
                }
            }
            Ok(())
        });
        self.loss += bits;
        self.positions += 1;
        bits
    }

    /// Average bits per position (boards only) of the steps so far, and
    /// resets the tally.
    pub(crate) fn take_loss(&mut self) -> f64 {
        let avg = self.loss / self.positions.max(1) as f64;
        self.loss = 0.0;
        self.positions = 0;
        avg
    }

    /// The model in fixed point.
    pub(crate) fn weights(&self) -> PositionWeights {
        PositionWeights {
            white_king: self.white_king.clone(),
            black_king: self.black_king.clone(),
            rows: self
                .w
                .iter()
                .flat_map(|r| {
                    r.iter().map(|&x| {
                        (x * SCALE as f32)
                            .round()
                            .clamp(f32::from(i16::MIN), f32::from(i16::MAX))
                            as i32
                    })
                })
                .collect(),
            turn: self.turn,
        }
    }
}
