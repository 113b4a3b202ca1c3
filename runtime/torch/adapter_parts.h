// The adapter's own work timed as parts of the runtime (XSC_PROFILE=parts,
// runtime/timing.h), so that a measurement can tell the operator hook and
// the allocator's context recorder from everything else. Untimed runs pay
// one null test per scope.
#pragma once

#include "xstream_check/host_api.h"

namespace xsc::torch_adapter {

// `api` when it times parts, else null: asked once, at attach (the runtime
// fixes the answer before any adapter attaches).
inline const xsc_host_api* parts_api(const xsc_host_api* api) {
  return api != nullptr && api->version >= 5 && api->parts_timed != nullptr &&
                 api->part_enter != nullptr && api->part_leave != nullptr &&
                 api->parts_timed() != 0
             ? api
             : nullptr;
}

// Times its scope as `part` (XSC_PART_*) through `api` from parts_api().
class AdapterPart {
 public:
  AdapterPart(const xsc_host_api* api, int part)
      : api_(api), outer_(api != nullptr ? api->part_enter(part) : 0) {}
  ~AdapterPart() {
    if (api_ != nullptr) api_->part_leave(outer_);
  }
  AdapterPart(const AdapterPart&) = delete;
  AdapterPart& operator=(const AdapterPart&) = delete;

 private:
  const xsc_host_api* api_;
  int outer_;
};

}  // namespace xsc::torch_adapter
