// Rewriting one loaded object's calls of named functions (host_locks.cpp):
// the slots of its global offset table that the dynamic linker filled with
// those functions' addresses (PLT jump slots, and GLOB_DAT slots where the
// object was built without a PLT or takes a function's address) are made to
// point at replacements. Only that object's calls change: a call the
// executable makes reaches the replacement; the same function called by any
// other library, or reached by a tail call from one, does not. So which
// code made a call is known by where its slot lies, not guessed from a
// return address.
#pragma once

#include <link.h>

#include <cstddef>

namespace xsc::rt {

struct GotHook {
  const char* name;   // the function's symbol name (any version)
  void* replacement;  // what the object's slots will hold
};

// Rewrites every slot of `object` (an entry dl_iterate_phdr gave) that
// names one of `hooks`; returns how many were rewritten. Pages of the
// table made read-only after relocation (RELRO) are made writable for the
// writes and read-only again.
std::size_t patch_got(const struct dl_phdr_info& object, const GotHook* hooks, std::size_t count);

// patch_got on the executable (the first object dl_iterate_phdr gives).
std::size_t patch_executable_got(const GotHook* hooks, std::size_t count);
// patch_got on every loaded library whose file name begins with `prefix`
// ("libstdc++.so").
std::size_t patch_library_got(const char* prefix, const GotHook* hooks, std::size_t count);

}  // namespace xsc::rt
