// Forward dataflow over the op graph. The state answers, for every use of a
// buffer still reachable at a point (and for its known writes apart): which
// streams are ordered after it, which event records capture it, and whether
// the host has waited for it. A free is checked against the uses, a use
// against the known writes, a known write against the uses.
//
// Joins keep a use present on either incoming path (it may exist) but only the
// ordering facts true on both (they must hold). So a free reports a use when
// on at least one path nothing orders the free's stream after it.
#include <algorithm>
#include <deque>
#include <map>
#include <set>
#include <tuple>

#include "analysis/ops.h"

namespace xsc::lint {
namespace {

template <typename T>
void insert_sorted(std::vector<T>& v, T x) {
  auto it = std::lower_bound(v.begin(), v.end(), x);
  if (it == v.end() || *it != x) v.insert(it, x);
}

template <typename T>
void erase_sorted(std::vector<T>& v, T x) {
  auto it = std::lower_bound(v.begin(), v.end(), x);
  if (it != v.end() && *it == x) v.erase(it);
}

template <typename T>
bool contains_sorted(const std::vector<T>& v, T x) {
  return std::binary_search(v.begin(), v.end(), x);
}

template <typename T>
std::vector<T> intersect(const std::vector<T>& a, const std::vector<T>& b) {
  std::vector<T> out;
  std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

template <typename T>
std::vector<T> unite(const std::vector<T>& a, const std::vector<T>& b) {
  std::vector<T> out;
  std::set_union(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

bool contains_range(const std::vector<std::uint64_t>& ranges, std::uint64_t range) {
  return std::find(ranges.begin(), ranges.end(), range) != ranges.end();
}

struct UseFacts {
  KeyId stream = kNoKey;
  std::vector<KeyId> ordered;    // streams whose later work runs after the use
  std::vector<SiteId> captures;  // record sites whose event completes after it
  bool host = false;             // the host has waited for it
  // The host may have waited for it, on some path: by a query or a
  // synchronous copy (kHostMayWait), or a wait made under no condition but
  // the copy's own (Op::guard). The host's own accesses are judged by this
  // and by `host`.
  bool host_may = false;
  std::uint32_t guard = 0;       // Op::guard
  bool partial = false;          // made through a pointer offset (Op::partial), on some path
  std::uintptr_t capture = 0;    // Op::capture
  bool host_judged = false;      // Op::host_judged

  bool operator==(const UseFacts&) const = default;

  // A use the host has waited for is ordered before everything that follows,
  // so joining it with another path keeps that path's facts.
  void join(const UseFacts& o) {
    const bool may = host_may || o.host_may;
    if (o.host) {
      host_may = may;
      return;
    }
    if (host) {
      *this = o;
      host_may = may;
      return;
    }
    ordered = intersect(ordered, o.ordered);
    captures = intersect(captures, o.captures);
    partial = partial || o.partial;
    host_may = may;
  }
  bool ordered_on(KeyId s) const { return host || contains_sorted(ordered, s); }
};

struct BufferFacts {
  std::vector<KeyId> alloc_streams;  // may: streams it was allocated on
  std::vector<KeyId> recorded;       // must: record_stream'd streams
  std::map<SiteId, UseFacts> uses;
  std::map<SiteId, UseFacts> writes;  // the known writes among the uses

  bool operator==(const BufferFacts&) const = default;
};

// A free already made, kept so that a later wait that orders it is found.
struct OpenKey {
  SiteId free_site;
  SiteId use_site;
  KeyId stream;
  auto operator<=>(const OpenKey&) const = default;
};

struct State {
  bool reached = false;
  std::map<KeyId, BufferFacts> buffers;
  std::map<KeyId, std::vector<SiteId>> events;  // may: record sites
  std::map<OpenKey, UseFacts> open;
  // The stream each library handle is bound to, on the paths that bound
  // it; kNoKey where two paths bound it to different streams.
  std::map<KeyId, KeyId> handles;

  bool operator==(const State&) const = default;
};

template <typename K, typename V, typename F>
void join_maps(std::map<K, V>& into, const std::map<K, V>& from, F&& join_value) {
  for (const auto& [k, v] : from) {
    auto it = into.find(k);
    if (it == into.end())
      into.emplace(k, v);
    else
      join_value(it->second, v);
  }
}

void join_state(State& into, const State& from) {
  if (!from.reached) return;
  if (!into.reached) {
    into = from;
    return;
  }
  join_maps(into.buffers, from.buffers, [](BufferFacts& a, const BufferFacts& b) {
    a.alloc_streams = unite(a.alloc_streams, b.alloc_streams);
    a.recorded = intersect(a.recorded, b.recorded);
    join_maps(a.uses, b.uses, [](UseFacts& x, const UseFacts& y) { x.join(y); });
    join_maps(a.writes, b.writes, [](UseFacts& x, const UseFacts& y) { x.join(y); });
  });
  join_maps(into.events, from.events,
            [](std::vector<SiteId>& a, const std::vector<SiteId>& b) { a = unite(a, b); });
  join_maps(into.open, from.open, [](UseFacts& x, const UseFacts& y) { x.join(y); });
  // A handle bound on one path and not known on the other keeps its
  // binding (a use through it is judged on the path that bound it); bound
  // to two streams, it is not judged.
  for (const auto& [handle, stream] : from.handles) {
    auto [it, inserted] = into.handles.try_emplace(handle, stream);
    if (!inserted && it->second != stream) it->second = kNoKey;
  }
}

// Where findings go during the reporting pass; null while iterating.
struct Sink {
  std::map<std::tuple<SiteId, SiteId, KeyId>, UnorderedFree> found;
  std::map<std::pair<SiteId, SiteId>, UnorderedAccess> not_ready;
  std::map<std::pair<SiteId, SiteId>, UnorderedAccess> overwritten;
};

template <typename F>
void for_each_use(State& s, F&& f) {
  for (auto& [key, buf] : s.buffers) {
    for (auto& [site, use] : buf.uses) f(use);
    for (auto& [site, write] : buf.writes) f(write);
  }
}

// Whether two stream keys may name one stream: elements of one container
// picked by counters of nested loops over one range (`s[i]` and `s[j]`),
// whose counters may be equal.
bool may_be_one_stream(const OpGraph& graph, KeyId a, KeyId b) {
  if (a == b) return true;
  if (a >= graph.element_class.size() || b >= graph.element_class.size()) return false;
  return graph.element_class[a] != 0 && graph.element_class[a] == graph.element_class[b];
}

// Whether CUDA may order work on streams a and b by itself: a default
// stream (legacy or per-thread) with the other default stream, or with a
// stream not known to be non-blocking (a stream the function is handed may
// be blocking, and the legacy stream orders blocking streams' work).
bool may_be_implicitly_ordered(const OpGraph& graph, KeyId a, KeyId b) {
  const bool default_a = contains_sorted(graph.implicitly_ordered, a);
  const bool default_b = contains_sorted(graph.implicitly_ordered, b);
  if (!default_a && !default_b) return false;
  if (default_a && default_b) return true;
  return !contains_sorted(graph.non_blocking, default_a ? b : a);
}

// Whether work on the legacy default stream, enqueued on `stream`, comes
// after the earlier work of a use on `use_stream`: CUDA orders the legacy
// stream after every blocking stream, which a stream the function is handed
// may be, but not after one the function creates non-blocking.
bool legacy_covers(const OpGraph& graph, KeyId stream, KeyId use_stream) {
  return stream == graph.legacy && !contains_sorted(graph.non_blocking, use_stream);
}

// The earlier accesses (`earlier`: a buffer's writes or its uses) that
// `op`, an access on another stream, is not ordered after, each given to
// `found(site, facts)`. Not judged where CUDA may order the two streams
// itself (may_be_implicitly_ordered: a default stream and a stream not
// created non-blocking in the function), nor where either
// access may touch only a part of the buffer (two streams filling and
// reading halves of one array), nor between work of a stream capture and
// work outside it (or of another capture).
//
// The host's accesses of pinned and managed memory are judged against
// copies, memsets and known writes only (Op::host_judged), on the default
// streams too (their copies are as
// asynchronous to the host as any other stream's), and ordered by the
// host's waits (`host`, `host_may`). An earlier write through a pointer
// offset is left out here as well (the host may read only the part a
// synchronized stream wrote), but a host access through an offset is
// judged against a whole buffer's access.
template <typename F>
void each_unordered(const std::map<SiteId, UseFacts>& earlier, const Op& op, const OpGraph& graph, F&& found) {
  const bool host = op.stream == graph.host;
  if (!host && op.partial) return;
  for (const auto& [site, e] : earlier) {
    if (site == op.site || may_be_one_stream(graph, e.stream, op.stream)) continue;
    if (host ? e.host || e.host_may || !e.host_judged : e.ordered_on(op.stream)) continue;
    if (e.partial || e.capture != op.capture) continue;
    if (!host && may_be_implicitly_ordered(graph, e.stream, op.stream)) continue;
    found(site, e);
  }
}

// A use must come after every earlier write on another stream
// (use-before-ready); a known write after every earlier use on another
// stream, a read it would overwrite or another write (write-after-read).
void check_accesses(const BufferFacts& buf, const Op& op, const OpGraph& graph, Sink& sink) {
  if (op.kind == OpKind::kUse)
    each_unordered(buf.writes, op, graph, [&](SiteId site, const UseFacts& write) {
      sink.not_ready.emplace(std::make_pair(op.site, site),
                             UnorderedAccess{op.site, op.buffer, op.stream, site, write.stream});
    });
  else
    each_unordered(buf.uses, op, graph, [&](SiteId site, const UseFacts& use) {
      sink.overwritten.emplace(std::make_pair(op.site, site),
                               UnorderedAccess{op.site, op.buffer, op.stream, site, use.stream});
    });
}

void transfer(State& s, const Op& op, const OpGraph& graph, Sink* sink) {
  switch (op.kind) {
    case OpKind::kAlloc: {
      BufferFacts fresh;
      if (op.stream != kNoKey) fresh.alloc_streams.push_back(op.stream);
      s.buffers[op.buffer] = std::move(fresh);
      break;
    }
    case OpKind::kUse:
    case OpKind::kWrite: {
      if (op.stream == kNoKey) break;
      BufferFacts& buf = s.buffers[op.buffer];
      if (sink) check_accesses(buf, op, graph, *sink);
      UseFacts use;
      use.stream = op.stream;
      use.ordered.push_back(op.stream);
      use.partial = op.partial;
      use.capture = op.capture;
      use.host_judged = op.host_judged;
      use.guard = op.guard;
      // The host's own access is over before it enqueues anything after it.
      use.host = op.stream == graph.host;
      use.host_may = use.host;
      if (op.kind == OpKind::kWrite) buf.writes[op.site] = use;
      buf.uses[op.site] = std::move(use);
      break;
    }
    case OpKind::kRecord: {
      if (op.event == kNoKey || op.stream == kNoKey) break;
      s.events[op.event] = {op.site};
      // A record on the legacy stream is taken to capture every use it may
      // come after (legacy_covers), so that nothing it may order is
      // reported.
      auto capture = [&](UseFacts& u) {
        if (legacy_covers(graph, op.stream, u.stream) || u.ordered_on(op.stream))
          insert_sorted(u.captures, op.site);
        else
          erase_sorted(u.captures, op.site);  // this record replaces an older one
      };
      for_each_use(s, capture);
      for (auto& [k, u] : s.open) capture(u);
      break;
    }
    case OpKind::kWait: {
      if (op.stream == kNoKey) break;
      auto ev = s.events.find(op.event);
      if (ev == s.events.end() || ev->second.empty()) break;
      const std::vector<SiteId>& records = ev->second;
      auto captured = [&](const UseFacts& u) {
        return std::all_of(records.begin(), records.end(),
                           [&](SiteId r) { return contains_sorted(u.captures, r); });
      };
      for_each_use(s, [&](UseFacts& u) {
        if (captured(u)) insert_sorted(u.ordered, op.stream);
      });
      for (auto it = s.open.begin(); it != s.open.end();) {
        if (captured(it->second)) insert_sorted(it->second.ordered, op.stream);
        if (it->first.stream == op.stream && it->second.ordered_on(op.stream)) {
          if (sink) {
            auto f = sink->found.find({it->first.free_site, it->first.use_site, it->first.stream});
            if (f != sink->found.end() && !f->second.has_late_wait) {
              f->second.has_late_wait = true;
              f->second.late_wait_site = op.site;
            }
          }
          it = s.open.erase(it);
        } else {
          ++it;
        }
      }
      break;
    }
    case OpKind::kStreamSync:
    case OpKind::kEventSync:
    case OpKind::kDeviceSync: {
      const std::vector<SiteId>* records = nullptr;
      if (op.kind == OpKind::kEventSync) {
        auto ev = s.events.find(op.event);
        if (ev == s.events.end() || ev->second.empty()) break;
        records = &ev->second;
      }
      auto synced = [&](const UseFacts& u) {
        if (op.kind == OpKind::kDeviceSync) return true;
        if (op.kind == OpKind::kStreamSync)
          return op.stream != kNoKey &&
                 (u.ordered_on(op.stream) || legacy_covers(graph, op.stream, u.stream));
        return std::all_of(records->begin(), records->end(),
                           [&](SiteId r) { return contains_sorted(u.captures, r); });
      };
      const std::vector<std::uintptr_t>& wait_guards = graph.guard_sets[op.guard];
      for_each_use(s, [&](UseFacts& u) {
        if (!synced(u)) return;
        u.host = true;
        const std::vector<std::uintptr_t>& use_guards = graph.guard_sets[u.guard];
        if (std::includes(use_guards.begin(), use_guards.end(), wait_guards.begin(), wait_guards.end()))
          u.host_may = true;
      });
      // A host wait after the free ends the hazard but is not "the wait".
      for (auto it = s.open.begin(); it != s.open.end();)
        it = synced(it->second) ? s.open.erase(it) : std::next(it);
      break;
    }
    case OpKind::kFree: {
      auto it = s.buffers.find(op.buffer);
      if (it == s.buffers.end()) break;
      const BufferFacts& buf = it->second;
      std::vector<KeyId> free_streams;
      if (op.stream != kNoKey)
        free_streams.push_back(op.stream);
      else
        free_streams = buf.alloc_streams;
      for (KeyId fs : free_streams) {
        for (const auto& [use_site, use] : buf.uses) {
          if (use.ordered_on(fs) || contains_sorted(buf.recorded, use.stream) ||
              may_be_one_stream(graph, use.stream, fs))
            continue;
          s.open[OpenKey{op.site, use_site, fs}] = use;
          if (sink) {
            UnorderedFree uf;
            uf.free_site = op.site;
            uf.buffer = op.buffer;
            uf.free_stream = fs;
            uf.use_site = use_site;
            uf.use_stream = use.stream;
            sink->found.emplace(std::make_tuple(op.site, use_site, fs), uf);
          }
        }
      }
      s.buffers.erase(it);
      break;
    }
    case OpKind::kCopy: {
      if (op.source == op.buffer) break;
      auto src = s.buffers.find(op.source);
      if (src == s.buffers.end()) {
        s.buffers.erase(op.buffer);
      } else {
        BufferFacts copy = src->second;
        s.buffers[op.buffer] = std::move(copy);
      }
      break;
    }
    case OpKind::kKill:
      s.buffers.erase(op.buffer);
      break;
    case OpKind::kEventCopy: {
      if (op.source == op.event) break;
      auto src = s.events.find(op.source);
      if (src == s.events.end()) {
        s.events.erase(op.event);
      } else {
        std::vector<SiteId> copy = src->second;
        s.events[op.event] = std::move(copy);
      }
      break;
    }
    case OpKind::kRecordStream:
      if (op.stream != kNoKey) insert_sorted(s.buffers[op.buffer].recorded, op.stream);
      break;
    case OpKind::kHostMayWait:
      // Only the host's accesses count it as a wait: a query may have
      // answered "not ready", and a synchronous copy on the legacy stream
      // does not wait for non-blocking streams.
      for_each_use(s, [&](UseFacts& u) { u.host_may = true; });
      break;
    case OpKind::kBindHandle:
      if (op.stream == kNoKey)
        s.handles.erase(op.source);
      else
        s.handles[op.source] = op.stream;
      break;
    case OpKind::kHandleUse: {
      auto bound = s.handles.find(op.source);
      if (bound == s.handles.end() || bound->second == kNoKey) break;  // no one stream known
      Op use = op;
      use.kind = op.write ? OpKind::kWrite : OpKind::kUse;
      use.stream = bound->second;
      transfer(s, use, graph, sink);
      break;
    }
    case OpKind::kAssumeEmpty: {
      // Every loop over the range ran no round: the buffers, events and
      // uses bound to it were never made on this path. Joined with the
      // path through the loop, what that path knows of them stands.
      auto bound = [&](KeyId k) {
        return k < graph.key_ranges.size() && contains_range(graph.key_ranges[k], op.range);
      };
      std::erase_if(s.buffers, [&](const auto& entry) { return bound(entry.first); });
      for (auto& [key, buf] : s.buffers) {
        std::erase_if(buf.uses, [&](const auto& entry) { return bound(entry.second.stream); });
        std::erase_if(buf.writes, [&](const auto& entry) { return bound(entry.second.stream); });
      }
      std::erase_if(s.events, [&](const auto& entry) { return bound(entry.first); });
      std::erase_if(s.open, [&](const auto& entry) {
        return bound(entry.first.stream) || bound(entry.second.stream);
      });
      break;
    }
  }
}

}  // namespace

DataflowResult run_stream_order_dataflow(const OpGraph& graph) {
  DataflowResult result;
  const std::size_t n = graph.blocks.size();
  if (n == 0) return result;
  std::vector<State> in(n);
  in[graph.entry].reached = true;

  std::deque<unsigned> work{graph.entry};
  std::vector<bool> queued(n, false);
  queued[graph.entry] = true;
  // Every join only grows key sets and shrinks fact sets, so this converges;
  // the budget guards against pathological functions.
  std::size_t budget = 64 * n + 1024;
  while (!work.empty()) {
    if (budget-- == 0) {
      result.gave_up = true;
      return result;
    }
    unsigned b = work.front();
    work.pop_front();
    queued[b] = false;
    State out = in[b];
    for (const Op& op : graph.blocks[b].ops) transfer(out, op, graph, nullptr);
    for (unsigned succ : graph.blocks[b].succs) {
      State joined = in[succ];
      join_state(joined, out);
      if (!(joined == in[succ])) {
        in[succ] = std::move(joined);
        if (!queued[succ]) {
          queued[succ] = true;
          work.push_back(succ);
        }
      }
    }
  }

  // Reporting pass: replay each block once from its fixpoint state. Frees are
  // found first, late waits attach to them, so replay until nothing changes.
  Sink sink;
  for (int round = 0; round < 2; ++round) {
    for (std::size_t b = 0; b < n; ++b) {
      if (!in[b].reached) continue;
      State s = in[b];
      for (const Op& op : graph.blocks[b].ops) transfer(s, op, graph, &sink);
    }
  }
  for (auto& [key, uf] : sink.found) result.unordered.push_back(uf);
  for (auto& [key, access] : sink.not_ready) result.not_ready.push_back(access);
  for (auto& [key, access] : sink.overwritten) result.overwritten.push_back(access);
  return result;
}

}  // namespace xsc::lint
