// What a kernel's source declares of its parameters, told by the front end
// that compiled it at run time and saw the source (CuPy: the observer in
// python/xstream_check/autoload/ reads each kernel CuPy compiles).
//
// A parameter is of unknown direction, read only (`const T*`, CuPy's
// `const CArray<...>` inputs), or an array descriptor through which the
// kernel writes every element it describes (an ElementwiseKernel's output,
// bound once per index and assigned unconditionally). The descriptor is
// CuPy's CArray<T, ndim, ...> passed by value: the data pointer, the
// element count, then ndim extents and ndim byte strides, all 8 bytes (a
// 0-dimensional one holds the pointer and the count only).
//
// Pure functions of the argument bytes, no CUDA: launch.cpp calls them at
// each launch of a declared kernel, and the unit tests on made-up bytes.
#pragma once

#include <cstddef>
#include <cstdint>

namespace xsc::rt {

enum class DeclaredAccess : std::uint8_t {
  kUnknown,      // the source does not say
  kRead,         // the kernel only reads through the parameter
  kWritesArray,  // an array descriptor whose every element the kernel writes
};

struct DeclaredParam {
  DeclaredAccess access = DeclaredAccess::kUnknown;
  std::uint32_t itemsize = 0;  // kWritesArray: bytes per element
  std::uint32_t ndim = 0;      // kWritesArray: the descriptor's dimensions
};

// The bytes of an array descriptor of `ndim` dimensions.
constexpr std::size_t array_descriptor_size(std::uint32_t ndim) { return 16 + 16 * std::size_t{ndim}; }

// Bytes the kernel writes through an array descriptor: [*addr, *addr + *size).
struct ArrayWrite {
  std::uint64_t addr = 0;
  std::uint64_t size = 0;
};

// The bytes a kernel that writes every element of the descriptor at
// `bytes` (`size` bytes long) writes. A dense array (its elements tile one
// run of memory, in any order of its dimensions, strides of either sign)
// gives all its bytes; a strided one only its first element, since other
// arrays may own the bytes between its elements. False when nothing is
// written (no elements) or the bytes are no descriptor of this shape: the
// wrong length, a null pointer, a count that is not the extents' product,
// or values too large to be a real array's.
bool array_write_extent(const unsigned char* bytes, std::size_t size, const DeclaredParam& param,
                        ArrayWrite* out);

}  // namespace xsc::rt
