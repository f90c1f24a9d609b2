// Keeps C++ exceptions on the C++ side of the shim's extern "C" functions
// (cuPQC's make_workspace and get_entropy throw std::runtime_error; an
// exception unwinding into Rust aborts the process). Every entry point runs
// its body through guarded(), which turns an exception into a named status
// and keeps its message for pqcprof_cupqc_last_error().
#pragma once

#include "shim.h"

#include <cstdio>
#include <exception>
#include <new>

namespace pqcprof_shim {

inline thread_local char last_error[512] = "";

inline void set_last_error(const char *what, const char *message) {
    std::snprintf(last_error, sizeof last_error, "%s%s%s", what, *what ? ": " : "", message);
}

// Runs body() (which returns a status) and maps whatever it throws:
// std::bad_alloc to PQCPROF_CUPQC_E_HOST_MEMORY, anything else to
// `on_exception` (PQCPROF_CUPQC_E_EXCEPTION unless the caller knows better,
// e.g. PQCPROF_CUPQC_E_WORKSPACE around make_workspace). `what` prefixes the
// stored message.
template <class Body>
int guarded(const char *what, int on_exception, Body &&body) noexcept {
    try {
        return body();
    } catch (const std::bad_alloc &) {
        set_last_error(what, "host memory allocation failed (std::bad_alloc)");
        return PQCPROF_CUPQC_E_HOST_MEMORY;
    } catch (const std::exception &e) {
        set_last_error(what, e.what());
        return on_exception;
    } catch (...) {
        set_last_error(what, "an exception that is not a std::exception");
        return on_exception;
    }
}

} // namespace pqcprof_shim
