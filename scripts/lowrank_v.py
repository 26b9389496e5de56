#!/usr/bin/env python3
"""Writes `model`'s weights with the hidden layer's output weights `v`
replaced by a rank-r approximation (issue 58: what a factored `v` costs
without retraining; docs/faster-model.md).

    python3 scripts/lowrank_v.py SRC_WEIGHTS DST_WEIGHTS RANK

SRC_WEIGHTS is crates/chesspack/src/model/weights.bin; write DST into a
copy of the tree (a git worktree), build it and run `chesspack stats
--codec model --holdout` there. Needs NumPy.
"""

import sys, numpy as np
src, dst, r = sys.argv[1], sys.argv[2], int(sys.argv[3])
d = bytearray(open(src,'rb').read())
ver, nf, ni, h = np.frombuffer(bytes(d[4:20]), '<u4')
off = 20 + 4*nf + 4*h + 2*h*ni
v = np.frombuffer(bytes(d), '<i2', h*nf, off).astype(np.float64).reshape(nf, h)
U, s, Vt = np.linalg.svd(v, full_matrices=False)
approx = (U[:, :r] * s[:r]) @ Vt[:r]
q = np.clip(np.rint(approx), -32768, 32767).astype('<i2')
d[off:off+2*h*nf] = q.tobytes()
open(dst,'wb').write(bytes(d))
print("rank", r, "rms error", float(np.sqrt(((approx - v)**2).mean())), "rms v", float(np.sqrt((v**2).mean())))
