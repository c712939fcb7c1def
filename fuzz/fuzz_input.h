/* The byte reader the harnesses decode their inputs with. An exhausted input reads as zeros, so
 * every prefix of an input is an input too (libFuzzer's mutations stay meaningful). */
#ifndef CNC_FUZZ_INPUT_H
#define CNC_FUZZ_INPUT_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct {
  const uint8_t* data;
  size_t size, at;
} fuzz_input;

static inline int fz_left(const fuzz_input* in) { return in->at < in->size; }

static inline uint8_t fz_u8(fuzz_input* in) { return in->at < in->size ? in->data[in->at++] : 0; }

static inline uint32_t fz_u32(fuzz_input* in) {
  uint32_t v = 0;
  for (int b = 0; b < 4; ++b) v |= (uint32_t)fz_u8(in) << (8 * b);
  return v;
}

static inline uint64_t fz_u64(fuzz_input* in) {
  const uint64_t lo = fz_u32(in);
  return lo | (uint64_t)fz_u32(in) << 32;
}

/* One of `count` choices. */
static inline unsigned fz_pick(fuzz_input* in, unsigned count) { return fz_u8(in) % count; }

/* A double that matters to a solver: mostly small integers and simple fractions, sometimes a
 * boundary (NaN, infinities, huge, tiny, subnormal, -0) or raw bits. */
static inline double fz_double(fuzz_input* in) {
  const uint8_t tag = fz_u8(in);
  if (tag < 160) return (double)((int)(tag % 17) - 8) / (tag < 80 ? 1.0 : 4.0);
  switch (tag % 12) {
    case 0:
      return NAN;
    case 1:
      return INFINITY;
    case 2:
      return -INFINITY;
    case 3:
      return 1e308;
    case 4:
      return -1e300;
    case 5:
      return 1e-300;
    case 6:
      return 4.9e-324;
    case 7:
      return -0.0;
    case 8:
      return 1e20;
    case 9:
      return 1e-20;
    default: {
      const uint64_t bits = fz_u64(in);
      double v;
      memcpy(&v, &bits, sizeof v);
      return v;
    }
  }
}

/* An index: mostly below `n` (n > 0), sometimes n itself, just above it or a huge value. */
static inline uint32_t fz_index(fuzz_input* in, uint32_t n) {
  const uint8_t tag = fz_u8(in);
  if (tag < 240) return n ? tag % n : tag;
  switch (tag % 4) {
    case 0:
      return n;
    case 1:
      return n + 1;
    case 2:
      return UINT32_MAX;
    default:
      return fz_u32(in);
  }
}

#endif
