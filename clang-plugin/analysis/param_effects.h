// What a function does through each of its pointer and reference
// parameters, read from its body when the translation unit has it.
//
// Two callers ask: a kernel launch, whose argument is a write of the buffer
// when the kernel's body stores through that parameter; and a host call
// given pinned memory, which reads or writes it on the host. A body writes
// through a parameter with an assignment, an increment, an atomic or a
// device function that does one of these, through the parameter itself, an
// offset of it, or a local pointer or reference taken from it. Anything the
// body does with the parameter that this cannot follow (it is stored into a
// struct, passed to a function without a body, handed to inline assembly,
// returned) leaves the parameter unknown: a kernel's unknown argument is
// taken as a use, as one of a kernel without a visible body is, and a host
// call's is not taken as an access at all.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "clang/AST/Decl.h"

namespace xsc::lint {

// Ordered: a parameter's effect is the largest of what its mentions do.
enum class ParamEffect : std::uint8_t {
  kNone,     // the body never reaches the memory it points to
  kRead,     // the body only reads it
  kUnknown,  // the body does something with it that is not followed
  // The body writes through it only at an offset a scalar parameter picks
  // (`p[offset + i]`, `p + chunk * size`): two launches given other
  // offsets may write apart, so the write is taken as partial.
  kWritePart,
  kWrite,    // the body writes through it on some path
};

// Whether the body writes through the parameter, wholly or in part.
inline bool is_write(ParamEffect e) { return e == ParamEffect::kWrite || e == ParamEffect::kWritePart; }

// Per function, cached; one instance per translation unit (ApiModel's).
class ParamEffects {
 public:
  // Per declared parameter of `fd`'s definition, in order; empty when the
  // definition is not in the translation unit. Parameters that are not
  // pointers or references are kNone. A function the body calls with a
  // parameter is followed into its own body; while a body is being read, a
  // recursive call finds its parameters unknown.
  const std::vector<ParamEffect>& effects_of(const clang::FunctionDecl* fd);
  // What a call of `callee` does through its `arg`th argument (after the
  // object of a member operator), for a callee with or without a body:
  // atomics, stores and the C library's memory functions by name, a
  // pointer to const as a read, else the body's effect or unknown.
  ParamEffect effect_of_argument(const clang::FunctionDecl* callee, unsigned arg);
  // Whether a launch of `kernel` writes some argument (wholly or in part).
  bool writes_some_param(const clang::FunctionDecl* kernel);
  // Whether the body reaches its `arg`th parameter's memory through a
  // volatile lvalue or a system-scope atomic (atomicAdd_system), itself or
  // in a function it passes the memory to: it shares that memory with the
  // host while it runs, on purpose (a flag, a counter the host polls).
  bool shared_with_host(const clang::FunctionDecl* fd, unsigned arg);

 private:
  // Node-based, so that a reference handed out stays valid while the map grows.
  std::unordered_map<const clang::FunctionDecl*, std::vector<ParamEffect>> cache_;
  // Per definition, the parameters shared with the host (bit i: parameter i).
  std::unordered_map<const clang::FunctionDecl*, std::uint64_t> shared_;
};

}  // namespace xsc::lint
