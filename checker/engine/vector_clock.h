// Vector clocks over dense agent indices.
//
// Every stream and every host thread is an agent with a small dense index;
// a clock is a flat array of per-agent epochs. Missing trailing entries read
// as 0, so a clock only grows when it learns about a newer agent, and joins
// in the steady state never allocate.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace xsc {

using AgentId = std::uint32_t;
using Epoch = std::uint64_t;  // 0 = "nothing of this agent seen"

inline constexpr AgentId kNoAgent = ~AgentId{0};

class VectorClock {
 public:
  Epoch get(AgentId agent) const {
    return agent < epochs_.size() ? epochs_[agent] : 0;
  }
  void set(AgentId agent, Epoch epoch);
  // Advances `agent`'s own component and returns the new epoch.
  Epoch tick(AgentId agent) {
    if (agent >= epochs_.size()) grow(agent);
    return ++epochs_[agent];
  }
  // Raises one component to at least `epoch`.
  void raise(AgentId agent, Epoch epoch) {
    if (agent >= epochs_.size()) {
      if (epoch == 0) return;
      grow(agent);
    }
    if (epochs_[agent] < epoch) epochs_[agent] = epoch;
  }
  // Component-wise maximum.
  void join(const VectorClock& other);
  // Component-wise minimum.
  void meet(const VectorClock& other);
  // Overwrites with `other`, reusing this clock's storage.
  void assign(const VectorClock& other);
  void clear() { epochs_.clear(); }
  // True when every component of this clock is <= the one in `other`.
  bool happens_before_or_equal(const VectorClock& other) const;
  std::size_t size() const { return epochs_.size(); }
  // Drops the storage (a retired agent's clock is never read again).
  void release() { std::vector<Epoch>().swap(epochs_); }

 private:
  void grow(AgentId agent);  // to agent + 1 components

  std::vector<Epoch> epochs_;
};

}  // namespace xsc
