#!/usr/bin/env python3
"""Writes the seed corpus of the fuzz harnesses (fuzz/corpus/<harness>/seed-*): small meaningful
inputs, encoded the way each harness decodes its bytes (fuzz_input.h). Regression inputs (files
named regression-*) are added by hand when a finding is fixed and are left alone here.
    python3 fuzz/make_corpus.py
"""
import gzip
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))


def write(harness, name, data):
    folder = os.path.join(HERE, "corpus", harness)
    os.makedirs(folder, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    with open(os.path.join(folder, "seed-" + name), "wb") as f:
        f.write(data)


def u32(v):
    return struct.pack("<I", v & 0xFFFFFFFF)


def u64(v):
    return struct.pack("<Q", v & 0xFFFFFFFFFFFFFFFF)


def flagged(op, ops, mask=32):
    """The opcode byte of operation `op` (byte % ops) with the bits of `mask` set (variants)."""
    return next(c for c in range(256) if c % ops == op and c & mask == mask)


def small(v):
    """fz_double's byte for a small integer -8..8."""
    assert -8 <= v <= 8
    return bytes([v + 8])


# ---- Matrix Market files (fuzz_matrix_market) ---------------------------------------------------
MM = "%%MatrixMarket matrix "
mtx = {
    "general.mtx": MM + "coordinate real general\n% a comment\n3 3 4\n1 1 4.0\n2 1 -1.5\n"
    "2 2 5e0\n3 3 1\n",
    "symmetric.mtx": MM + "coordinate real symmetric\n%\n3 3 4\n1 1 2\n2 1 -1\n3 2 -1\n3 3 2\n",
    "skew.mtx": MM + "coordinate real skew-symmetric\n3 3 2\n2 1 1.5\n3 1 -2\n",
    "pattern.mtx": MM + "coordinate pattern general\n2 3 3\n1 1\n1 3\n2 2\n",
    "integer.mtx": MM + "coordinate integer general\n2 2 2\n1 1 -7\n2 2 +12\n",
    "hermitian.mtx": MM + "coordinate complex hermitian\n2 2 2\n1 1 3 0\n2 1 1 -2\n",
    "complex.mtx": MM + "coordinate complex general\n1 2 2\n1 1 1 2\n1 2 -3 4.5\n",
    "array.mtx": MM + "array real general\n2 3\n1\n2\n3\n4\n5\n6\n",
    "array-symmetric.mtx": MM + "array real symmetric\n3 3\n1\n2\n3\n4\n5\n6\n",
    "array-skew.mtx": MM + "array real skew-symmetric\n3 3\n1\n2\n3\n",
    "crlf-tabs.mtx": MM.replace(" ", "\t")
    + "coordinate\treal\tgeneral\r\n2\t2\t1\r\n2\t1\t0.5\r\n",
    "blank-lines.mtx": MM + "coordinate real general\n\n  \n2 2 2\n\n1 1 1\n%c\n2 2 2\n\n",
    "no-final-newline.mtx": MM + "coordinate real general\n1 1 1\n1 1 3.25",
    "empty-matrix.mtx": MM + "coordinate real general\n5 4 0\n",
    # Hostile: each must be refused with a message, or read exactly as written.
    "huge-nnz.mtx": MM + "coordinate real general\n2 2 1099511627776\n1 1 1\n",
    "huge-nnz-63.mtx": MM + "coordinate real general\n2 2 9223372036854775807\n1 1 1\n",
    "overflow-count.mtx": MM + "coordinate real general\n2 2 100000000000000000000\n",
    "negative-count.mtx": MM + "coordinate real general\n2 2 -1\n",
    "zero-rows.mtx": MM + "coordinate real general\n0 2 0\n",
    "huge-rows.mtx": MM + "coordinate real general\n2147483648 1 0\n",
    "long-comment.mtx": MM + "coordinate real general\n%" + "c" * 1022 + "3 3 3 " + "c" * 3972
    + "\n2 2 3\n1 1 4.0\n2 1 -1.5\n2 2 5.0\n",
    "symmetric-not-square.mtx": MM + "coordinate real symmetric\n2 3 1\n1 1 1\n",
    "symmetric-both-triangles.mtx": MM + "coordinate real symmetric\n2 2 2\n2 1 1\n1 2 1\n",
    "skew-diagonal.mtx": MM + "coordinate real skew-symmetric\n2 2 1\n1 1 1\n",
    "truncated.mtx": MM + "coordinate real general\n3 3 3\n1 1 1\n2 2 2\n",
    "out-of-range.mtx": MM + "coordinate real general\n2 2 1\n3 1 1\n",
    "zero-index.mtx": MM + "coordinate real general\n2 2 1\n0 1 1\n",
    "nan-value.mtx": MM + "coordinate real general\n1 1 1\n1 1 nan\n",
    "inf-value.mtx": MM + "coordinate real general\n1 1 1\n1 1 -inf\n",
    "trailing-entry.mtx": MM + "coordinate real general\n2 2 1\n1 1 1\n2 2 2\n",
    "trailing-token.mtx": MM + "coordinate real general\n2 2 1\n1 1 1 7\n",
    "nul-byte.mtx": MM + "coordinate real general\n2 2 1\n1 1 5\0 7\n",
    "complex-array-pattern.mtx": MM + "array pattern general\n1 1\n",
    "hermitian-real.mtx": MM + "coordinate real hermitian\n1 1 1\n1 1 1\n",
    "bad-banner.mtx": "%%MatrixMarket tensor coordinate real general\n1 1 0\n",
    "integer-not-integer.mtx": MM + "coordinate integer general\n1 1 1\n1 1 1.5\n",
    "hex-value.mtx": MM + "coordinate real general\n1 1 1\n1 1 0x1p3\n",
    "empty.mtx": "",
}
for name, text in mtx.items():
    write("matrix_market", name, text)
write("matrix_market", "general.mtx.gz", gzip.compress(mtx["symmetric.mtx"].encode(), mtime=0))
# A gzip file that inflates past the reader's 64 KiB blocks: lines cut across block ends.
big = MM + "coordinate real general\n400 400 8000\n" + "".join(
    "%d %d %d.%03d\n" % (k % 400 + 1, (k * 7) % 400 + 1, k % 13, k % 997) for k in range(8000))
write("matrix_market", "blocks.mtx.gz", gzip.compress(big.encode(), mtime=0))
write("matrix_market", "two-members.mtx.gz",
      gzip.compress(MM.encode() + b"coordinate real general\n", mtime=0)
      + gzip.compress(b"1 1 1\n1 1 2\n", mtime=0))


# ---- cncSolveCSR (fuzz_solve_csr): n, base, nrhs, shape, nulls, then the shape's bytes ----------
def csr_dominant(n, base, nrhs, general, per_row, params=b"\0", second=0, split=0):
    head = bytes([n, base, nrhs - 1, 1 if general else 0, 0])
    body = bytes([per_row])
    for i in range(n):  # per_row off-diagonal entries: column, value byte, divisor byte
        for t in range(per_row):
            body += bytes([(i + 1 + 3 * t) % n, (i + t) % 9, t % 4])
    body += bytes([(i * 5) % 4 for i in range(n)])  # diagonal extras
    body += bytes([split])
    body += bytes([(i * 31) % 251 for i in range(4 * n * n)])  # split/shuffle choices
    vec = bytes([1]) + bytes([(i * 3) % 9 for i in range(n * nrhs)])  # plain vectors
    return head + body + vec + params + bytes([second]) + bytes(range(64))


write("solve_csr", "spd-8", csr_dominant(8, 0, 1, False, 2))
write("solve_csr", "spd-16-base1-2rhs-split", csr_dominant(16, 1, 2, False, 3, split=1))
write("solve_csr", "spd-same-arrays-again", csr_dominant(12, 0, 1, False, 2, second=1))
write("solve_csr", "spd-new-values", csr_dominant(12, 0, 3, False, 2, second=2))
write("solve_csr", "spd-new-rhs", csr_dominant(12, 0, 1, False, 2, second=3))
# which=0xFF: every parameter set: BiCGSTAB, SSOR, single, BCRS2, RCM, threshold, nonsymmetric
write("solve_csr", "general-bicgstab",
      csr_dominant(20, 0, 1, True, 3, params=bytes([0xFF, 2, 2, 1, 2, 2, 2, 0, 50, 10, 4, 1])))
write("solve_csr", "general-gmres-sell",
      csr_dominant(33, 1, 1, True, 4, params=bytes([0x8F, 3, 0, 2, 4, 40, 7, 3, 0])))
write("solve_csr", "spd-cg-mixed-bcrs4",
      csr_dominant(17, 0, 2, False, 2, params=bytes([0x2F, 1, 1, 2, 3, 1])))
raw = bytes([6, 0, 0, 2, 0]) + bytes([2, 1, 3, 0, 2, 1])  # row lengths
raw += b"".join(bytes([c, v]) for c, v in [(0, 10), (1, 7), (1, 10), (0, 7), (2, 10), (3, 10),
                                          (2, 7), (4, 9), (5, 0), (5, 10), (250, 1), (4, 10)])
write("solve_csr", "raw-out-of-range", raw)
corrupt = bytes([5, 1, 0, 3, 0]) + bytes([1, 2, 1, 1, 2]) + bytes([2, 3, 0, 2, 3, 2, 5])
write("solve_csr", "corrupt-row-ptr", corrupt + bytes(range(40)))
write("solve_csr", "csrn-raw", bytes([6, 0, 0, 2 | 4, 0]) + raw[5:])
write("solve_csr", "csrn-corrupt-short",
      bytes([5, 1, 0, 3 | 4 | 8 | 16, 0]) + corrupt[5:] + bytes(range(40)))
write("solve_csr", "csrn-spd", csr_dominant(10, 1, 1, False, 2)[:3] + bytes([4])
      + csr_dominant(10, 1, 1, False, 2)[4:])
write("solve_csr", "null-values", bytes([4, 0, 0, 0, 250, 2]) + bytes(range(80)))
write("solve_csr", "zero-n", bytes([0, 0, 0, 2, 0]))
write("solve_csr", "bad-base", bytes([3, 244, 0, 2, 0, 1, 1, 1]) + bytes(range(30)))


# ---- cnc.h call sequences (fuzz_state_machine): opcode byte, then its arguments ---------------
def sm_begin(p):
    return bytes([0, p])


def sm_end(p):
    return bytes([1, p])


PN = {"NB_VARIABLES": 0, "NB_SYSTEMS": 1, "LEAST_SQUARES": 2, "SOLVER": 4, "NNZ_HINT": 12,
      "BACKEND": 10, "STATE": 27, "REASON": 21}
VAL = {0: 0, 1: 1, 2: 2, 3: 3, -1: 4, 7: 5, 64: 6, "GMRES": 10, "CPU": 23, "BIG": 31}


def sm_param(p, v):
    return bytes([2, PN[p], VAL[v]])


def sm_add(i, j, v):
    return bytes([14, i, j]) + small(v)


def sm_rhs(i, v):
    return bytes([17, i]) + small(v)


tridiag = b"".join(sm_add(i, j, v) for i in range(7) for j, v in
                   [(i - 1, -1), (i, 2), (i + 1, -1)] if 0 <= j < 7)
tridiag += b"".join(sm_rhs(i, 1) for i in range(7))
plain = sm_param("NB_VARIABLES", 7) + sm_begin(0) + sm_begin(1) + tridiag + sm_end(1) + sm_end(0)
write("state_machine", "tridiagonal-solve", plain + bytes([20, 5, 21, 27, 5, 3, 21]))
write("state_machine", "lock-and-resolve",
      sm_param("NB_VARIABLES", 7) + sm_begin(0) + bytes([8, 0]) + small(1) + bytes([11, 0, 0])
      + sm_begin(1) + tridiag + sm_end(1) + sm_end(0) + bytes([20]) + sm_begin(1) + tridiag
      + sm_end(1) + sm_end(0) + bytes([21]))
rows = b"".join(sm_begin(2) + bytes([12, k]) + small(1) + bytes([12, 1]) + small(k % 8)
                + bytes([13, 0]) + small(k % 5) + sm_end(2) for k in range(6))
write("state_machine", "least-squares-rows",
      sm_param("NB_VARIABLES", 2) + sm_param("LEAST_SQUARES", 1) + sm_begin(0) + sm_begin(1)
      + rows + sm_end(1) + sm_end(0) + bytes([20]))
write("state_machine", "pattern-first",
      sm_param("NB_VARIABLES", 7) + sm_begin(0) + sm_begin(3) + bytes([flagged(18, 26)])
      + bytes([3, 3, 3, 3, 3, 3, 3, 0]) + sm_end(3) + sm_begin(1)
      + b"".join(bytes([flagged(19, 26), i, i]) + small(4) + bytes([0]) for i in range(7))
      + b"".join(bytes([19, i, (i + 1) % 7]) + small(-1) + bytes([3 * i + 1]) for i in range(7))
      + sm_end(1) + sm_end(0) + bytes([20]))
write("state_machine", "bulk-and-errors",
      sm_param("NB_VARIABLES", 64) + sm_begin(0) + sm_begin(1) + bytes([16, 12])
      + bytes(range(24)) + bytes([9] * 12) + bytes([3]) + sm_end(1) + sm_end(0)
      + bytes([16, 3, 1]) + bytes([23, 0, 23, 1, 5, 250] + [0] * 4 + [3, 25, 9]))
write("state_machine", "gmres-multi-system",
      sm_param("NB_VARIABLES", 7) + sm_param("NB_SYSTEMS", 2) + sm_param("SOLVER", "GMRES")
      + sm_begin(0) + sm_begin(1) + tridiag + bytes([flagged(17, 26), 3, 1]) + small(2)
      + sm_end(1) + sm_end(0) + bytes([20, 22, 7, 1, 0]))
write("state_machine", "bad-calls",
      bytes([0, 9, 1, 1, 2, 255, 1, 2, 3, 4, 0, 5, 255, 4, 7, 1, 12, 0, 10, 3, 250, 19, 5, 5, 9])
      + sm_param("NNZ_HINT", "BIG") + bytes([4, 12, 32, 25, 0, 22, 250, 2]))


# ---- OpenNL call sequences (fuzz_opennl): first byte picks the context kind, then opcodes ------
def nl(*ops):
    return bytes([0]) + b"".join(ops)


NLP = {"SOLVER": 0, "NB_VARIABLES": 1, "LEAST_SQUARES": 2, "NB_SYSTEMS": 14, "SYMMETRIC": 6,
       "VARIABLES_BUFFER": 18, "NORMALIZE_ROWS": 15, "PRECONDITIONER": 11}
NLV = {"CG": 1, "BICGSTAB": 2, "GMRES": 3, "SSOR": 17, 0: 20, 1: 21, 2: 22, 3: 23, 7: 24,
       "FLOAT_BCRS2": 8}


def nl_param(p, v):
    return bytes([2, NLP[p], NLV[v]])


def nl_row(coefs, rhs):
    out = bytes([0, 2])
    for j, v in coefs:
        out += bytes([10, j]) + small(v)
    return out + bytes([14, 0]) + small(rhs) + bytes([1, 2])


plain_rows = b"".join(nl_row([(i - 1, -1), (i, 2), (i + 1, -1)][(i == 0):(3 - (i == 6))], 1)
                      for i in range(7))
write("opennl", "plain-rows",
      nl(nl_param("NB_VARIABLES", 7), nl_param("SYMMETRIC", 1), bytes([0, 0, 0, 1]), plain_rows,
         bytes([1, 1, 1, 0, 16, 8, 3, 8, 0])))
write("opennl", "least-squares-locked",
      nl(nl_param("NB_VARIABLES", 2), nl_param("LEAST_SQUARES", 1), bytes([0, 0]),
         bytes([7, 0, 0]) + small(1) + bytes([9, 0, 0, 0, 1]),
         b"".join(nl_row([(0, 1), (1, k % 8)], k % 7) for k in range(8)),
         bytes([1, 1, 1, 0, 17])))
write("opennl", "buffers-and-systems",
      nl(nl_param("NB_VARIABLES", 7), nl_param("NB_SYSTEMS", 2), bytes([5, 18, 0]),
         bytes([18, 0, 1, 0, 18, 1, 2, 0]), bytes([0, 0, 0, 1]), plain_rows,
         bytes([14, 1, 1]) + small(3), bytes([1, 1, 1, 0, 16, 8, 2, flagged(8, 24), 4, 1])))
write("opennl", "legacy-solver-and-pattern",
      bytes([1]) + nl_param("NB_VARIABLES", 7) + nl_param("SOLVER", "FLOAT_BCRS2")
      + bytes([0, 0, 0, 3, 15, 0, 0, 3, 15, 1, 250, 0, 0, 1, 0, 1, 3]) + bytes([0, 1])
      + plain_rows + bytes([1, 1, 1, 0, 16]))
write("opennl", "unsupported-and-errors",
      nl(bytes([19, 0, 19, 1, 1, 19, 4, flagged(20, 24), 2, 20, 6, 2, 21, 0, 21, 1, 23,
                flagged(22, 24), 6, 32, 22, 1, 0, 2, 9, 0, 3, 250, 0, 0, 0, 0])))
