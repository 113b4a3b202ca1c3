// Hash-consed storage of host and Python stacks, as in TSan's stack depot:
// the hot path stores raw program counters once and hands out a small id;
// symbolization happens only when a report is printed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "checker/engine/event.h"

namespace xsc {

struct Frame {
  std::string function;  // demangled; empty when unknown
  std::string file;      // source file; empty when unknown
  std::uint32_t line = 0;
  std::string module;    // shared object / executable path
  std::uint64_t pc = 0;  // 0 for frames that never had one (Python, replay)
  // An autograd node (`function` is its name, "NllLossBackward0"): the
  // stack is of work its backward did, and the frames after it are the
  // forward call that created the node (no source position of its own).
  bool autograd_node = false;
};

// Turns a program counter into a Frame. The runtime installs one backed by
// elfutils; replay needs none because traces carry symbolized frames.
class Symbolizer {
 public:
  virtual ~Symbolizer() = default;
  virtual Frame symbolize(std::uint64_t pc) = 0;
  // The frames at `pc`, innermost first: the calls inlined there, each at
  // the line it runs, then the function the code was compiled into, at the
  // line of its outermost inlined call. A symbolizer that knows no inlining
  // gives the one frame symbolize() does.
  virtual void symbolize_inlined(std::uint64_t pc, std::vector<Frame>* out) {
    out->push_back(symbolize(pc));
  }
};

// Thread-safe. Ids are dense and start at 1 (kNoStack is 0).
class StackDepot {
 public:
  StackDepot();
  ~StackDepot();
  StackDepot(const StackDepot&) = delete;
  StackDepot& operator=(const StackDepot&) = delete;

  // Raw return addresses, innermost first. Identical sequences share an id.
  StackId intern_pcs(const std::uint64_t* pcs, std::size_t n);
  // Frames that are already symbolic (Python frames, replayed traces).
  StackId intern_frames(std::vector<Frame> frames);

  // Symbolized frames of `id` (empty for kNoStack or an unknown id). PCs are
  // symbolized on first request through the installed Symbolizer and cached;
  // a pending deferred stack is resolved here.
  std::vector<Frame> frames(StackId id) const;
  std::size_t size() const;  // number of distinct stacks

  // A stack whose frames are produced later: Python contexts captured under
  // PyTorch's allocator lock are symbolized only at a safe point, and trace
  // stacks may be defined after their first use.
  using Resolver = std::function<std::vector<Frame>()>;
  StackId intern_deferred(Resolver resolver);
  // Runs every pending resolver now; the caller knows this point is safe.
  void resolve_pending();
  // Reserves an id to be defined later; define() (re)sets its frames.
  StackId reserve();
  void define(StackId id, std::vector<Frame> frames);

  void set_symbolizer(std::shared_ptr<Symbolizer> symbolizer);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Interned strings (kernel names, thread names, graph names). Thread-safe.
class NameTable {
 public:
  NameTable();
  ~NameTable();
  NameTable(const NameTable&) = delete;
  NameTable& operator=(const NameTable&) = delete;

  NameId intern(std::string_view name);   // "" -> kNoName
  std::string_view get(NameId id) const;  // kNoName / unknown -> ""
  std::size_t size() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace xsc
