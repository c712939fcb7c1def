// What the files of the solve pipeline (pipeline*.cpp) share: the API's format codes, the key of
// a prepared system, logging.
#pragma once

#include <cstdint>
#include <string>

#include "backends/backend.hpp"
#include "cnc.h"
#include "matrix/matrix.hpp"
#include "pipeline/pipeline.hpp"

namespace cnc::pipeline_detail {

inline format from_api_format(int f) {
  return f == CNC_FORMAT_BCRS2   ? format::bcrs2
         : f == CNC_FORMAT_BCRS4 ? format::bcrs4
         : f == CNC_FORMAT_SELL  ? format::sell
                                 : format::csr;
}

inline prepared_key key_for(const solve_options& o, std::uint64_t version, const backend* be,
                            int k) {
  return prepared_key{version, be, o.format, o.prec, k, o.jacobi};
}

inline void log_to(const solve_options& o, int level, const std::string& m) {
  if (o.log) o.log(level, m);
}

}  // namespace cnc::pipeline_detail
