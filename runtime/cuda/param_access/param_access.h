// What a kernel's C++ signature says about its pointer parameters.
//
// nvcc gives device functions their Itanium-mangled C++ names, and the
// mangled parameter list keeps each parameter's type exactly: a parameter
// declared `const T*` (whatever T is: a scalar, a struct, a template
// argument, with or without __restrict__) mangles as a pointer to a
// const-qualified type, and the kernel can only read through it. That is
// all this knows; every other parameter (a plain pointer, a struct that
// carries pointers, an array of pointers passed by value) stays unknown:
// the signature cannot say whether the kernel writes through it.
//
// Pure function of the name, no CUDA: the runtime calls it once per kernel
// (launch.cpp caches the result with the kernel's parameter layout), and
// the unit tests call it on names nvcc produced.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace xsc::rt {

enum class ParamAccess : std::uint8_t {
  kUnknown,  // the signature does not say
  kRead,     // a pointer to const: the kernel only reads the memory it points to
};

// Per declared parameter, in declaration order, with parameter packs
// expanded. False (and `out` empty) when nothing can be said: the name is
// not a mangled function (an extern "C" kernel, PTX written by hand), it
// does not parse, or a pack expansion is not one this can expand.
bool kernel_param_access(std::string_view mangled_name, std::vector<ParamAccess>* out);

// Whether the runtime was built with the parser (LLVM's Itanium demangler);
// without it kernel_param_access always answers false.
bool kernel_param_access_available();

}  // namespace xsc::rt
