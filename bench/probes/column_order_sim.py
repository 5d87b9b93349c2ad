# Run: /usr/bin/python3 bench/probes/column_order_sim.py (numpy); prints "mismatches: 0" when the
# three orders agree bit for bit on every size tried (sums of f32 with -0 identities).
# Simulates, in f32, the column order three ways for one column of R elements:
#  ref:    lanes (chunks of 8, lane j holds chunks j, j+L, ...), pairwise tree over the
#          power-of-two cover of the lanes in use, identity (-0) past the last
#  main:   4 warps, contiguous shares of cover/4 lanes, 8-lane rounds + single lanes on a
#          binary counter, collapse, then pairwise over the warps (ic's code on main)
#  inter:  rounds of 32 lanes (warp y lanes 8y..8y+7), 8-lane pairwise, 4-warp pairwise,
#          pushed at height 5, padded last round, collapse (the exp/column-interleaved code)
import numpy as np, sys
f = np.float32
NEG0 = f(-0.0)

def add(a, b): return f(a + b)

def lane_vals(x, R):
    C = (R + 7) // 8
    G = (C + 32767) // 32768 if C > 32768 else 1
    L = 1024 * G
    used = min(C, L)
    lanes = []
    for j in range(used):
        a = NEG0
        c = j
        while c < C:
            for e in range(8):
                r = c * 8 + e
                if r < R: a = add(a, x[r])
            c += L
        lanes.append(a)
    return lanes, used

def pairwise(v):
    v = list(v)
    s = 1
    while s < len(v):
        for q in range(0, len(v) - s, 2 * s):
            v[q] = add(v[q], v[q + s])
        s *= 2
    return v[0]

def ref(x, R):
    lanes, used = lane_vals(x, R)
    cover = 1
    while cover < used: cover *= 2
    return pairwise(lanes + [NEG0] * (cover - used)) if used else NEG0

class Counter:
    def __init__(s): s.st = []; s.sh = []
    def push(s, a, h):
        s.st.append(a); s.sh.append(h)
        while len(s.st) >= 2 and s.sh[-1] == s.sh[-2]:
            b = s.st.pop(); s.sh.pop(); s.st[-1] = add(s.st[-1], b); s.sh[-1] += 1
    def collapse(s):
        while len(s.st) >= 2:
            b = s.st.pop(); s.sh.pop(); s.st[-1] = add(s.st[-1], b)
        return s.st[0] if s.st else NEG0

def main_order(x, R, W=4):
    lanes, used = lane_vals(x, R)
    cover = 1
    while cover < used: cover *= 2
    share = cover // W if cover >= W else 1
    res = []
    for y in range(W):
        l0 = y * share; l1 = min(l0 + share, used)
        c = Counter(); j = l0
        while j + 8 <= l1:
            c.push(pairwise(lanes[j:j + 8]), 3); j += 8
        while j < l1:
            c.push(lanes[j], 0); j += 1
        res.append(c.collapse())
    return pairwise(res)

def inter_order(x, R, W=4):
    lanes, used = lane_vals(x, R)
    h = 3 + (W.bit_length() - 1)
    rounds = (used + 8 * W - 1) // (8 * W)
    c = Counter()
    for r8 in range(rounds):
        subs = []
        for y in range(W):
            j = r8 * 8 * W + y * 8
            subs.append(pairwise([lanes[k] if k < used else NEG0 for k in range(j, j + 8)]))
        c.push(pairwise(subs), h)
    return c.collapse()

rng = np.random.default_rng(1)
bad = 0
for R in [0, 1, 7, 8, 9, 63, 64, 65, 255, 256, 300, 1000, 1024, 4040, 4096, 4100, 4160, 16384, 20001, 262151, 300000]:
    for trial in range(3):
        x = (rng.standard_normal(R) * (10.0 ** rng.integers(-3, 4, R))).astype(f)
        if trial == 2 and R > 3: x[R // 3] = f(-0.0); x[:] = np.where(rng.random(R) < 0.5, f(-0.0), x)
        a, b, c = ref(x, R), main_order(x, R), inter_order(x, R)
        for W in (8,):
            c8 = inter_order(x, R, W)
            if c8.tobytes() != a.tobytes(): bad += 1; print("W8 differs", R, trial)
        if not (a.tobytes() == b.tobytes() == c.tobytes()):
            bad += 1; print("differs", R, trial, a, b, c)
print("mismatches:", bad)
