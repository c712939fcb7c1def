// Internal error type: every failure inside cnc is thrown as cnc::error carrying a public status
// code (CNC_ERR_*) and a message; the API layer (src/api) catches it and turns it into a status.
#pragma once

#include <stdexcept>
#include <string>

namespace cnc {

class error : public std::runtime_error {
 public:
  error(int status, const std::string& message) : std::runtime_error(message), status_(status) {}
  int status() const { return status_; }

 private:
  int status_;
};

}  // namespace cnc
