// A small stream-aware caching allocator, shaped like PyTorch's:
//   - every block is tagged with the stream it was allocated on and is handed
//     out again only to allocations on that same stream;
//   - release() is a host action: the block becomes reusable at once, with no
//     stream operation, so ordering it after other streams is the caller's job;
//   - record_stream() marks a block as used by another stream; releasing such
//     a block parks it behind one event per recorded stream, and the next
//     allocate() polls those events and returns the block once all completed.
// It reports allocations and the moments blocks become reusable through the
// xstream-check annotations, so the checker sees it like any allocator it
// knows; without the runtime the annotations do nothing.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "common.cuh"
#include "xstream_check/annotations.h"

namespace xsc_example {

class CachingAllocator {
 public:
  CachingAllocator() = default;
  ~CachingAllocator() { release_cached(); }
  CachingAllocator(const CachingAllocator&) = delete;
  CachingAllocator& operator=(const CachingAllocator&) = delete;

  // Out of line, like a real allocator's entry points: the caller's frame in
  // a report then shows the caller's own line.
  __attribute__((noinline)) void* allocate(std::size_t size, cudaStream_t stream) {
    std::lock_guard<std::mutex> lock(mu_);
    process_events();
    std::size_t rounded = round_up(size);
    Block* best = nullptr;
    for (auto& [ptr, block] : blocks_) {
      if (block.state != State::kFree || block.stream != stream || block.size < rounded) continue;
      if (!best || block.size < best->size) best = &block;
    }
    if (!best) {
      void* ptr = nullptr;
      XSC_EXAMPLE_CHECK(cudaMalloc(&ptr, rounded));
      best = &blocks_[ptr];
      best->ptr = ptr;
      best->size = rounded;
      best->stream = stream;
    }
    best->state = State::kInUse;
    best->recorded.clear();
    XSC_ANNOTATE_ALLOC(best->ptr, best->size, stream);
    return best->ptr;
  }

  // The owner is done with `ptr`. Without recorded streams the block goes
  // straight back to its allocation stream's free list.
  __attribute__((noinline)) void release(void* ptr) {
    std::lock_guard<std::mutex> lock(mu_);
    Block& block = lookup(ptr);
    if (block.recorded.empty()) {
      make_reusable(block);
      return;
    }
    for (cudaStream_t s : block.recorded) {
      cudaEvent_t ev = take_event();
      XSC_EXAMPLE_CHECK(cudaEventRecord(ev, s));
      block.pending.push_back(ev);
    }
    block.recorded.clear();
    block.state = State::kParked;
  }

  // `stream` (not the allocation stream) also uses the block.
  void record_stream(void* ptr, cudaStream_t stream) {
    std::lock_guard<std::mutex> lock(mu_);
    Block& block = lookup(ptr);
    if (stream == block.stream) return;
    for (cudaStream_t s : block.recorded)
      if (s == stream) return;
    block.recorded.push_back(stream);
  }

  std::size_t parked_blocks() const {
    std::lock_guard<std::mutex> lock(mu_);
    std::size_t n = 0;
    for (const auto& [ptr, block] : blocks_) n += block.state == State::kParked;
    return n;
  }

  // Returns every free block to CUDA. Call with the device synchronized.
  void release_cached() {
    std::lock_guard<std::mutex> lock(mu_);
    process_events();
    for (auto it = blocks_.begin(); it != blocks_.end();) {
      if (it->second.state != State::kFree) {
        ++it;
        continue;
      }
      XSC_EXAMPLE_CHECK(cudaFree(it->first));
      it = blocks_.erase(it);
    }
    for (cudaEvent_t ev : spare_events_) XSC_EXAMPLE_CHECK(cudaEventDestroy(ev));
    spare_events_.clear();
  }

 private:
  enum class State { kInUse, kParked, kFree };
  struct Block {
    void* ptr = nullptr;
    std::size_t size = 0;
    cudaStream_t stream = nullptr;
    State state = State::kFree;
    std::vector<cudaStream_t> recorded;  // record_stream() streams
    std::vector<cudaEvent_t> pending;    // while parked
  };

  static std::size_t round_up(std::size_t size) {
    constexpr std::size_t kGranule = std::size_t(2) << 20;
    return (size + kGranule - 1) / kGranule * kGranule;
  }

  Block& lookup(void* ptr) {
    auto it = blocks_.find(ptr);
    if (it == blocks_.end() || it->second.state != State::kInUse) {
      std::fprintf(stderr, "caching allocator: %p is not an allocated block\n", ptr);
      std::exit(1);
    }
    return it->second;
  }

  void make_reusable(Block& block) {
    block.state = State::kFree;
    XSC_ANNOTATE_FREE(block.ptr, block.stream);
  }

  // The record_stream poll: a parked block returns to its free list only once
  // every event recorded for it reports completion.
  void process_events() {
    for (auto& [ptr, block] : blocks_) {
      if (block.state != State::kParked) continue;
      while (!block.pending.empty()) {
        cudaError_t st = cudaEventQuery(block.pending.back());
        if (st == cudaErrorNotReady) break;
        XSC_EXAMPLE_CHECK(st);
        spare_events_.push_back(block.pending.back());
        block.pending.pop_back();
      }
      if (block.pending.empty()) make_reusable(block);
    }
  }

  cudaEvent_t take_event() {
    if (!spare_events_.empty()) {
      cudaEvent_t ev = spare_events_.back();
      spare_events_.pop_back();
      return ev;
    }
    cudaEvent_t ev;
    XSC_EXAMPLE_CHECK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
    return ev;
  }

  mutable std::mutex mu_;
  std::unordered_map<void*, Block> blocks_;
  std::vector<cudaEvent_t> spare_events_;
};

}  // namespace xsc_example
