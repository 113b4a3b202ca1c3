// Stack depot and name table.
//
// Stacks are hash-consed on the hot path (a hash of the raw PCs, compared
// element-wise on a hash hit) and symbolized only when someone asks for
// their frames. User code -- symbolizers and deferred resolvers -- always
// runs outside the depot's lock, so a resolver may itself intern stacks.
#include "checker/engine/stack_depot.h"

#include <algorithm>
#include <deque>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <utility>

namespace xsc {
namespace {

std::uint64_t mix(std::uint64_t h, std::uint64_t v) {
  // 64-bit FNV-style combine followed by a multiply-xorshift finalizer step.
  h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  h *= 0xff51afd7ed558ccdULL;
  return h ^ (h >> 33);
}

std::uint64_t hash_pcs(const std::uint64_t* pcs, std::size_t n) {
  std::uint64_t h = 0x84222325cbf29ce4ULL ^ n;
  for (std::size_t i = 0; i < n; ++i) h = mix(h, pcs[i]);
  return h;
}

std::uint64_t hash_string(std::uint64_t h, const std::string& s) {
  return mix(h, std::hash<std::string>{}(s));
}

std::uint64_t hash_frames(const std::vector<Frame>& frames) {
  std::uint64_t h = 0x6a09e667f3bcc908ULL ^ frames.size();
  for (const Frame& f : frames) {
    h = hash_string(h, f.function);
    h = hash_string(h, f.file);
    h = mix(h, f.line);
    h = hash_string(h, f.module);
    h = mix(h, f.pc);
    h = mix(h, f.autograd_node ? 1 : 0);
  }
  return h;
}

bool same_frame(const Frame& a, const Frame& b) {
  return a.pc == b.pc && a.line == b.line && a.function == b.function &&
         a.file == b.file && a.module == b.module && a.autograd_node == b.autograd_node;
}

bool same_frames(const std::vector<Frame>& a, const std::vector<Frame>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (!same_frame(a[i], b[i])) return false;
  return true;
}

}  // namespace

struct StackDepot::Impl {
  enum class Origin : unsigned char { kPcs, kFrames, kDeferred, kReserved };
  struct Entry {
    Origin origin = Origin::kFrames;
    std::vector<std::uint64_t> pcs;  // kPcs only
    std::vector<Frame> frames;       // valid once `symbolic` is set
    bool symbolic = false;
    Resolver resolver;               // kDeferred, until resolved
  };

  mutable std::mutex mu;
  // Index 0 is kNoStack and stays empty.
  std::deque<Entry> entries = std::deque<Entry>(1);
  std::unordered_multimap<std::uint64_t, StackId> by_pcs;
  std::unordered_multimap<std::uint64_t, StackId> by_frames;
  std::shared_ptr<Symbolizer> symbolizer;

  StackId add(Entry entry) {
    entries.push_back(std::move(entry));
    return static_cast<StackId>(entries.size() - 1);
  }
  bool valid(StackId id) const { return id != kNoStack && id < entries.size(); }

  // Produces frames for `id` without the lock held; stores them unless a
  // concurrent define() got there first.
  void materialize(StackId id) {
    std::unique_lock<std::mutex> lock(mu);
    Entry& e = entries[id];
    if (e.symbolic) return;
    if (e.origin == Origin::kDeferred && e.resolver) {
      Resolver resolver = std::move(e.resolver);
      e.resolver = nullptr;
      lock.unlock();
      std::vector<Frame> frames = resolver();
      lock.lock();
      Entry& again = entries[id];
      if (!again.symbolic) {
        again.frames = std::move(frames);
        again.symbolic = true;
      }
      return;
    }
    if (e.origin == Origin::kPcs) {
      std::vector<std::uint64_t> pcs = e.pcs;
      std::shared_ptr<Symbolizer> sym = symbolizer;
      lock.unlock();
      std::vector<Frame> frames;
      frames.reserve(pcs.size());
      for (std::uint64_t pc : pcs) {
        if (sym) {
          const std::size_t first = frames.size();
          sym->symbolize_inlined(pc, &frames);
          // A symbolizer may give the pc relative to its module.
          for (std::size_t i = first; i < frames.size(); ++i)
            if (frames[i].pc == 0) frames[i].pc = pc;
        } else {
          Frame f;
          f.pc = pc;
          frames.push_back(std::move(f));
        }
      }
      lock.lock();
      Entry& again = entries[id];
      // Without a symbolizer the raw PCs are not cached: one may be
      // installed later.
      if (!again.symbolic && sym) {
        again.frames = frames;
        again.symbolic = true;
      } else if (!again.symbolic) {
        again.frames = std::move(frames);
      }
    }
  }
};

StackDepot::StackDepot() : impl_(std::make_unique<Impl>()) {}
StackDepot::~StackDepot() = default;

StackId StackDepot::intern_pcs(const std::uint64_t* pcs, std::size_t n) {
  if (n == 0) return kNoStack;
  const std::uint64_t h = hash_pcs(pcs, n);
  std::lock_guard<std::mutex> lock(impl_->mu);
  auto range = impl_->by_pcs.equal_range(h);
  for (auto it = range.first; it != range.second; ++it) {
    const auto& stored = impl_->entries[it->second].pcs;
    if (stored.size() == n &&
        std::equal(stored.begin(), stored.end(), pcs))
      return it->second;
  }
  Impl::Entry entry;
  entry.origin = Impl::Origin::kPcs;
  entry.pcs.assign(pcs, pcs + n);
  StackId id = impl_->add(std::move(entry));
  impl_->by_pcs.emplace(h, id);
  return id;
}

StackId StackDepot::intern_frames(std::vector<Frame> frames) {
  if (frames.empty()) return kNoStack;
  const std::uint64_t h = hash_frames(frames);
  std::lock_guard<std::mutex> lock(impl_->mu);
  auto range = impl_->by_frames.equal_range(h);
  for (auto it = range.first; it != range.second; ++it) {
    if (same_frames(impl_->entries[it->second].frames, frames))
      return it->second;
  }
  Impl::Entry entry;
  entry.origin = Impl::Origin::kFrames;
  entry.frames = std::move(frames);
  entry.symbolic = true;
  StackId id = impl_->add(std::move(entry));
  impl_->by_frames.emplace(h, id);
  return id;
}

std::vector<Frame> StackDepot::frames(StackId id) const {
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    if (!impl_->valid(id)) return {};
    const Impl::Entry& e = impl_->entries[id];
    if (e.symbolic || e.origin == Impl::Origin::kReserved ||
        e.origin == Impl::Origin::kFrames)
      return e.frames;
  }
  impl_->materialize(id);
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->entries[id].frames;
}

std::size_t StackDepot::size() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->entries.size() - 1;
}

StackId StackDepot::intern_deferred(Resolver resolver) {
  Impl::Entry entry;
  entry.origin = Impl::Origin::kDeferred;
  entry.resolver = std::move(resolver);
  entry.symbolic = !entry.resolver;  // a null resolver means "no frames"
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->add(std::move(entry));
}

void StackDepot::resolve_pending() {
  std::vector<StackId> pending;
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    for (StackId id = 1; id < impl_->entries.size(); ++id) {
      const Impl::Entry& e = impl_->entries[id];
      if (e.origin == Impl::Origin::kDeferred && !e.symbolic && e.resolver)
        pending.push_back(id);
    }
  }
  for (StackId id : pending) impl_->materialize(id);
}

StackId StackDepot::reserve() {
  Impl::Entry entry;
  entry.origin = Impl::Origin::kReserved;
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->add(std::move(entry));
}

void StackDepot::define(StackId id, std::vector<Frame> frames) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  if (!impl_->valid(id)) return;
  Impl::Entry& e = impl_->entries[id];
  e.frames = std::move(frames);
  e.symbolic = true;
  e.resolver = nullptr;
}

void StackDepot::set_symbolizer(std::shared_ptr<Symbolizer> symbolizer) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->symbolizer = std::move(symbolizer);
}

struct NameTable::Impl {
  mutable std::mutex mu;
  // Index 0 is kNoName. A deque never moves its elements, so the map's
  // string_view keys and get()'s results stay valid.
  std::deque<std::string> names = std::deque<std::string>(1);
  std::unordered_map<std::string_view, NameId> ids;
};

NameTable::NameTable() : impl_(std::make_unique<Impl>()) {}
NameTable::~NameTable() = default;

NameId NameTable::intern(std::string_view name) {
  if (name.empty()) return kNoName;
  std::lock_guard<std::mutex> lock(impl_->mu);
  auto it = impl_->ids.find(name);
  if (it != impl_->ids.end()) return it->second;
  impl_->names.emplace_back(name);
  NameId id = static_cast<NameId>(impl_->names.size() - 1);
  impl_->ids.emplace(std::string_view(impl_->names.back()), id);
  return id;
}

std::string_view NameTable::get(NameId id) const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  if (id == kNoName || id >= impl_->names.size()) return {};
  return impl_->names[id];
}

std::size_t NameTable::size() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->names.size() - 1;
}

}  // namespace xsc
