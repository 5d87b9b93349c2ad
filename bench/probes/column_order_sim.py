# Run: /usr/bin/python3 bench/probes/column_order_sim.py (numpy); prints "mismatches: 0" when
# the orders agree bit for bit on every size tried (sums of f32 with -0 identities).
# Simulates, in f32, one column of R elements summed in the order ic.h documents and in the
# two ways ic's column kernels walk it (lib/backend/cuda/codegen_reduce_columns.c, _rounds.c):
#  ref:     lanes (chunks of 8, lane j holds chunks j, j + L, ...), the pairwise tree over
#           the power-of-two cover of the lanes in use, the identity (-0) past the last
#  shares:  heavy kernels (red_column_shares): W warps, contiguous shares of cover / W
#           lanes, 8-lane rounds and then single lanes on a binary counter, collapsed, then
#           pairwise over the warps
#  rounds:  light kernels (red_column_rounds): rounds of 8 W lanes (warp y lanes 8y .. 8y + 7),
#           8-lane pairwise, W-warp pairwise, pushed at height 3 + log2 W, the last round
#           padded, collapsed (a column split's partials and combine do the same)
import numpy as np
import numpy.typing as npt
from typing import List, Tuple

F32 = np.float32
NEG0 = F32(-0.0)
Vec = npt.NDArray[np.float32]


def add(a: np.float32, b: np.float32) -> np.float32:
    return F32(a + b)


def lane_values(x: Vec, rows: int) -> Tuple[List[np.float32], int]:
    """Each lane in use: its chunks' elements in order."""
    chunks = (rows + 7) // 8
    groups = (chunks + 32767) // 32768 if chunks > 32768 else 1
    lanes_total = 1024 * groups
    used = min(chunks, lanes_total)
    lanes = []
    for j in range(used):
        a = NEG0
        for c in range(j, chunks, lanes_total):
            for r in range(c * 8, min(c * 8 + 8, rows)):
                a = add(a, x[r])
        lanes.append(a)
    return lanes, used


def pairwise(values: List[np.float32]) -> np.float32:
    v = list(values)
    s = 1
    while s < len(v):
        for q in range(0, len(v) - s, 2 * s):
            v[q] = add(v[q], v[q + s])
        s *= 2
    return v[0]


def cover_of(used: int) -> int:
    cover = 1
    while cover < used:
        cover *= 2
    return cover


class Counter:
    """The binary counter of subtrees (st, heights), as the kernels keep it."""

    def __init__(self) -> None:
        self.st: List[np.float32] = []
        self.heights: List[int] = []

    def push(self, a: np.float32, height: int) -> None:
        self.st.append(a)
        self.heights.append(height)
        while len(self.st) >= 2 and self.heights[-1] == self.heights[-2]:
            b = self.st.pop()
            self.heights.pop()
            self.st[-1] = add(self.st[-1], b)
            self.heights[-1] += 1

    def collapse(self) -> np.float32:
        while len(self.st) >= 2:
            b = self.st.pop()
            self.heights.pop()
            self.st[-1] = add(self.st[-1], b)
        return self.st[0] if self.st else NEG0


def ref_order(x: Vec, rows: int) -> np.float32:
    lanes, used = lane_values(x, rows)
    return pairwise(lanes + [NEG0] * (cover_of(used) - used)) if used else NEG0


def shares_order(x: Vec, rows: int, warps: int) -> np.float32:
    lanes, used = lane_values(x, rows)
    cover = cover_of(used)
    share = cover // warps if cover >= warps else 1
    results = []
    for y in range(warps):
        l0, l1 = y * share, min(y * share + share, used)
        counter = Counter()
        j = l0
        while j + 8 <= l1:
            counter.push(pairwise(lanes[j:j + 8]), 3)
            j += 8
        while j < l1:
            counter.push(lanes[j], 0)
            j += 1
        results.append(counter.collapse())
    return pairwise(results)


def rounds_order(x: Vec, rows: int, warps: int) -> np.float32:
    lanes, used = lane_values(x, rows)
    height = 3 + (warps.bit_length() - 1)
    counter = Counter()
    for r in range((used + 8 * warps - 1) // (8 * warps)):
        subtrees = []
        for y in range(warps):
            j = r * 8 * warps + y * 8
            subtrees.append(pairwise([lanes[k] if k < used else NEG0 for k in range(j, j + 8)]))
        counter.push(pairwise(subtrees), height)
    return counter.collapse()


def main() -> None:
    rng = np.random.default_rng(1)
    bad = 0
    sizes = [0, 1, 7, 8, 9, 63, 64, 65, 255, 256, 300, 1000, 1024, 4040, 4096, 4100, 4160, 16384, 20001, 262151, 300000]
    for rows in sizes:
        for trial in range(3):
            x: Vec = (rng.standard_normal(rows) * (10.0 ** rng.integers(-3, 4, rows))).astype(F32)
            if trial == 2 and rows > 3:  # half the elements -0
                x[:] = np.where(rng.random(rows) < 0.5, NEG0, x)
            want = ref_order(x, rows).tobytes()
            got = {f"shares W={w}": shares_order(x, rows, w) for w in (4, 8)}
            got.update({f"rounds W={w}": rounds_order(x, rows, w) for w in (1, 2, 4, 8)})
            for name, value in got.items():
                if value.tobytes() != want:
                    bad += 1
                    print("differs:", name, rows, trial)
    print("mismatches:", bad)


if __name__ == "__main__":
    main()
