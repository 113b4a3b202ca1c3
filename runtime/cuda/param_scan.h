// Finding device pointers among kernel arguments. Pure functions over host
// memory, shared by the launch path and the unit tests.
//
// A kernel's arguments are opaque bytes; any 8-byte-aligned word of any
// parameter may be a device pointer (plain pointer parameters, pointers
// inside structs). The caller tests each candidate word against the live
// allocations, so a word that merely looks like an address costs one lookup.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "runtime/cuda/param_access/param_fill.h"

namespace xsc::rt {

// One kernel parameter: its offset in the parameter buffer and its size, as
// cuFuncGetParamInfo reports them.
struct ParamSlot {
  std::uint32_t offset = 0;
  std::uint32_t size = 0;
};

// Words that cannot be device addresses: small integers and values outside
// the canonical user half of the x86-64 / aarch64 address space.
inline constexpr std::uint64_t kLowestDeviceAddress = 0x10000;
inline constexpr std::uint64_t kAddressLimit = 1ull << 56;
inline bool plausible_device_address(std::uint64_t word) {
  return word >= kLowestDeviceAddress && word < kAddressLimit;
}

// The words a scan passes on: plausible device addresses inside [low, high)
// (the span of the tracked allocations), tested with one subtraction and
// one comparison per word, since PyTorch kernels pass kilobytes of
// arguments (sizes and strides) around a few pointers.
class AddressWindow {
 public:
  AddressWindow(std::uint64_t low, std::uint64_t high)
      : low_(low > kLowestDeviceAddress ? low : kLowestDeviceAddress),
        length_((high < kAddressLimit ? high : kAddressLimit) > low_
                    ? (high < kAddressLimit ? high : kAddressLimit) - low_
                    : 0) {}
  bool empty() const { return length_ == 0; }
  bool contains(std::uint64_t word) const { return word - low_ < length_; }

 private:
  std::uint64_t low_;
  std::uint64_t length_;
};
inline constexpr std::uint64_t kAnyAddressHigh = kAddressLimit;

// The 8-byte word at `p`, which may be unaligned.
inline std::uint64_t load_word(const unsigned char* p) {
  std::uint64_t word;
  std::memcpy(&word, p, sizeof word);
  return word;
}

// Calls sink(word, i, at) for every 8-byte word of every parameter that
// sits at an 8-byte-aligned offset of the parameter buffer and lies in
// `window`, with i the index of the parameter it belongs to and at the
// word's byte offset inside it (the runtime maps i and at to what the
// kernel's signature says about that parameter: param_access.h,
// param_fill.h).
// `params[i]` points to the value of parameter i (the cuLaunchKernel
// kernelParams convention). With `fills` (one per parameter), a parameter
// filled in part is read only where the launch of `grid` filled it
// (param_fill.h).
template <class Sink>
void scan_kernel_params_indexed(void* const* params, const ParamSlot* slots, std::size_t n,
                                const AddressWindow& window, Sink&& sink,
                                const ParamFill* fills = nullptr, const LaunchGrid& grid = {}) {
  if (params == nullptr || window.empty()) return;
  for (std::size_t i = 0; i < n; ++i) {
    const auto* base = static_cast<const unsigned char*>(params[i]);
    if (base == nullptr) continue;
    const std::uint32_t misalign = slots[i].offset % 8;
    for_each_scanned_word(fills != nullptr ? &fills[i] : nullptr, base, slots[i].size,
                          misalign == 0 ? 0 : 8 - misalign, grid, [&](std::uint32_t at) {
                            const std::uint64_t word = load_word(base + at);
                            if (window.contains(word)) sink(word, i, at);
                          });
  }
}

// The words alone.
template <class Sink>
void scan_kernel_params(void* const* params, const ParamSlot* slots, std::size_t n,
                        const AddressWindow& window, Sink&& sink) {
  scan_kernel_params_indexed(params, slots, n, window,
                             [&](std::uint64_t word, std::size_t, std::uint32_t) { sink(word); });
}

// Every plausible device address.
template <class Sink>
void scan_kernel_params(void* const* params, const ParamSlot* slots, std::size_t n, Sink&& sink) {
  scan_kernel_params(params, slots, n, AddressWindow(0, kAnyAddressHigh), sink);
}

// The packed-buffer form (cuLaunchKernel's `extra`): a list of key/value
// pairs ending in CU_LAUNCH_PARAM_END, where CU_LAUNCH_PARAM_BUFFER_POINTER
// gives the buffer and CU_LAUNCH_PARAM_BUFFER_SIZE points to its size.
inline constexpr std::uintptr_t kLaunchParamEnd = 0x00;
inline constexpr std::uintptr_t kLaunchParamBufferPointer = 0x01;
inline constexpr std::uintptr_t kLaunchParamBufferSize = 0x02;

// Extracts the packed buffer; false when `extra` has none.
inline bool packed_param_buffer(void* const* extra, const void** buffer, std::size_t* size) {
  if (extra == nullptr) return false;
  const void* found_buffer = nullptr;
  const std::size_t* found_size = nullptr;
  // The list is short; the bound guards against a malformed one.
  for (int i = 0; i < 64 && reinterpret_cast<std::uintptr_t>(extra[i]) != kLaunchParamEnd; i += 2) {
    const auto key = reinterpret_cast<std::uintptr_t>(extra[i]);
    if (key == kLaunchParamBufferPointer) found_buffer = extra[i + 1];
    else if (key == kLaunchParamBufferSize) found_size = static_cast<const std::size_t*>(extra[i + 1]);
  }
  if (found_buffer == nullptr || found_size == nullptr) return false;
  *buffer = found_buffer;
  *size = *found_size;
  return true;
}

// The parameter whose bytes hold [at, at + 8) of the packed buffer, or n
// when no single one does (padding, a word across two parameters, no
// layout). `slots` in offset order, as cuFuncGetParamInfo lists them.
inline std::size_t slot_of_word(const ParamSlot* slots, std::size_t n, std::size_t at) {
  std::size_t lo = 0, hi = n;
  while (lo < hi) {  // the first slot that starts after `at`
    const std::size_t mid = lo + (hi - lo) / 2;
    if (slots[mid].offset <= at) lo = mid + 1;
    else hi = mid;
  }
  if (lo == 0) return n;
  const ParamSlot& s = slots[lo - 1];
  return at + 8 <= std::size_t(s.offset) + s.size ? lo - 1 : n;
}

// Whether `fill` narrows what a scan of its parameter reads.
inline bool narrows(const ParamFill* fills, std::size_t i) {
  return fills != nullptr && fills[i].kind != ParamFill::Kind::kWhole;
}

// The packed-buffer scan with each word's parameter index (n: none). With
// `fills`, a parameter filled in part (and 8-byte aligned in the buffer) is
// read only where the launch of `grid` filled it, after the other words.
template <class Sink>
void scan_packed_buffer_indexed(const void* buffer, std::size_t size, const ParamSlot* slots,
                                std::size_t n, const AddressWindow& window, Sink&& sink,
                                const ParamFill* fills = nullptr, const LaunchGrid& grid = {}) {
  if (window.empty()) return;
  const auto* base = static_cast<const unsigned char*>(buffer);
  auto narrowed = [&](std::size_t i) {
    return i < n && narrows(fills, i) && slots[i].offset % 8 == 0 &&
           std::size_t(slots[i].offset) + slots[i].size <= size;
  };
  // The word's offset inside its parameter (0 when it lies in none).
  auto inside = [&](std::size_t i, std::size_t at) {
    return static_cast<std::uint32_t>(i < n ? at - slots[i].offset : 0);
  };
  for (std::size_t at = 0; at + 8 <= size; at += 8) {
    // Without fills a word's parameter is looked up only for the few words
    // in the window.
    if (fills != nullptr) {
      const std::size_t i = slot_of_word(slots, n, at);
      if (narrowed(i)) continue;
      const std::uint64_t word = load_word(base + at);
      if (window.contains(word)) sink(word, i, inside(i, at));
      continue;
    }
    const std::uint64_t word = load_word(base + at);
    if (!window.contains(word)) continue;
    const std::size_t i = slot_of_word(slots, n, at);
    sink(word, i, inside(i, at));
  }
  for (std::size_t i = 0; fills != nullptr && i < n; ++i) {
    if (!narrowed(i)) continue;
    const unsigned char* param = base + slots[i].offset;
    for_each_scanned_word(&fills[i], param, slots[i].size, 0, grid, [&](std::uint32_t at) {
      const std::uint64_t word = load_word(param + at);
      if (window.contains(word)) sink(word, i, at);
    });
  }
}

template <class Sink>
void scan_packed_buffer(const void* buffer, std::size_t size, const AddressWindow& window,
                        Sink&& sink) {
  scan_packed_buffer_indexed(buffer, size, nullptr, 0, window,
                             [&](std::uint64_t word, std::size_t, std::uint32_t) { sink(word); });
}

template <class Sink>
void scan_packed_buffer(const void* buffer, std::size_t size, Sink&& sink) {
  scan_packed_buffer(buffer, size, AddressWindow(0, kAnyAddressHigh), sink);
}

}  // namespace xsc::rt
