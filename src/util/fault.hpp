// Fault injection, for the tests of how GPU failures and one rank's failures are answered
// (CNC_FAULT_INJECT). Off unless the variable is set at start-up; then one relaxed load per checked
// point. Forms:
//   device-alloc:N  the N-th device allocation (process-wide count, from 1) fails as out of memory;
//   device-call:N   the N-th checked device call (kernel launch, copy, synchronisation) fails;
//   device-lost:N   every checked device call from the N-th on fails (a device that went away);
//   host-alloc:N    the N-th host reservation of a collective stage of libcnc_mpi fails as out of
//                   memory (set on one rank: the others must learn it, not wait).
// The failures carry "(injected by CNC_FAULT_INJECT)" in their message.
#pragma once

namespace cnc::fault {

enum class point { device_alloc, device_call, host_alloc };

// True when the check at `p` must fail now (and counts the point).
bool fire(point p);

// The text failures carry, for the messages.
constexpr const char* note = " (injected by CNC_FAULT_INJECT)";

}  // namespace cnc::fault
