// OpenNL's variables: values (in cnc, or in the caller's NL_VARIABLES_BUFFER arrays) and locks.
#include <cnc.h>
#include <cnc_nl.h>

#include <cstddef>

#include "nl_internal.hpp"

namespace cnc::nl {
namespace {

double* buffer_item(Context* ctx, CNCuint k, CNCuint i) {
  return reinterpret_cast<double*>(ctx->buffers[k].addr +
                                   static_cast<size_t>(i) * ctx->buffers[k].stride);
}

bool buffered(Context* ctx, CNCuint k) {
  return ctx->buffers_enabled && k < ctx->buffers.size() && ctx->buffers[k].addr != nullptr;
}

}  // namespace

bool check_index(Context* ctx, const char* call, CNCuint i, CNCuint k) {
  if (i >= ctx->n) {
    fail(ctx, CNC_ERR_INDEX_OUT_OF_RANGE,
         format("%s(i=%u): variable index out of range (NL_NB_VARIABLES = %u)", call, i, ctx->n));
    return false;
  }
  if (k >= ctx->nb_systems) {
    fail(ctx, CNC_ERR_INDEX_OUT_OF_RANGE,
         format("%s(k=%u): system index out of range (NL_NB_SYSTEMS = %u)", call, k,
                ctx->nb_systems));
    return false;
  }
  return true;
}

// Copies the bound buffers into cnc (all variables, or the free ones only).
void buffers_to_cnc(Context* ctx, bool free_only) {
  for (CNCuint k = 0; k < ctx->nb_systems; ++k) {
    if (!buffered(ctx, k)) continue;
    for (CNCuint i = 0; i < ctx->n; ++i) {
      if (free_only && ctx->locked[i]) continue;
      if (!ok(ctx, cncMultiSetVariable(i, k, *buffer_item(ctx, k, i)))) return;
    }
  }
}

void cnc_to_buffers(Context* ctx) {
  for (CNCuint k = 0; k < ctx->nb_systems; ++k) {
    if (!buffered(ctx, k)) continue;
    for (CNCuint i = 0; i < ctx->n; ++i) {
      if (!ok(ctx, cncMultiGetVariable(i, k, buffer_item(ctx, k, i)))) return;
    }
  }
}

}  // namespace cnc::nl

using namespace cnc::nl;

extern "C" {

void nlMultiSetVariable(NLuint i, NLuint k, NLdouble value) {
  Context* ctx = current("nlSetVariable");
  if (ctx == nullptr || !check_index(ctx, "nlSetVariable", i, k)) return;
  if (buffered(ctx, k)) {
    *buffer_item(ctx, k, i) = value;
  } else {
    ok(ctx, cncMultiSetVariable(i, k, value));
  }
}

void nlSetVariable(NLuint i, NLdouble value) { nlMultiSetVariable(i, 0, value); }

NLdouble nlMultiGetVariable(NLuint i, NLuint k) {
  Context* ctx = current("nlGetVariable");
  if (ctx == nullptr || !check_index(ctx, "nlGetVariable", i, k)) return 0.0;
  if (buffered(ctx, k)) return *buffer_item(ctx, k, i);
  double v = 0.0;
  ok(ctx, cncMultiGetVariable(i, k, &v));
  return v;
}

NLdouble nlGetVariable(NLuint i) { return nlMultiGetVariable(i, 0); }

void nlLockVariable(NLuint index) {
  Context* ctx = current("nlLockVariable");
  if (ctx == nullptr || !check_index(ctx, "nlLockVariable", index, 0)) return;
  if (ok(ctx, cncLockVariable(index))) {
    ctx->locked.resize(ctx->n, 0);
    ctx->locked[index] = 1;
  }
}

void nlUnlockVariable(NLuint index) {
  Context* ctx = current("nlUnlockVariable");
  if (ctx == nullptr || !check_index(ctx, "nlUnlockVariable", index, 0)) return;
  if (ok(ctx, cncUnlockVariable(index))) {
    ctx->locked.resize(ctx->n, 0);
    ctx->locked[index] = 0;
  }
}

NLboolean nlVariableIsLocked(NLuint index) {
  Context* ctx = current("nlVariableIsLocked");
  if (ctx == nullptr || !check_index(ctx, "nlVariableIsLocked", index, 0)) return NL_FALSE;
  return index < ctx->locked.size() && ctx->locked[index] ? NL_TRUE : NL_FALSE;
}

void nlBindBuffer(NLenum buffer, NLuint k, void* addr, NLuint stride) {
  Context* ctx = current("nlBindBuffer");
  if (ctx == nullptr) return;
  if (buffer != NL_VARIABLES_BUFFER) {
    fail(ctx, CNC_ERR_INVALID_ENUM, format("nlBindBuffer(0x%x): only NL_VARIABLES_BUFFER", buffer));
    return;
  }
  if (k >= ctx->nb_systems) {
    fail(ctx, CNC_ERR_INDEX_OUT_OF_RANGE,
         format("nlBindBuffer(k=%u): system index out of range (NL_NB_SYSTEMS = %u)", k,
                ctx->nb_systems));
    return;
  }
  ctx->buffers.resize(ctx->nb_systems);
  ctx->buffers[k].addr = static_cast<char*>(addr);
  ctx->buffers[k].stride = stride == 0 ? sizeof(double) : stride;
}

}  // extern "C"
