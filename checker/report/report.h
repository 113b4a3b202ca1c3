// Report writers: turn the checker's findings into text (ThreadSanitizer
// style), JSON Lines or SARIF 2.1.0. Detection lives elsewhere; nothing here
// decides what is a bug.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "checker/engine/finding.h"
#include "checker/options.h"
#include "checker/engine/stack_depot.h"

namespace xsc {

// The tool's version, as reports and --version print it.
inline constexpr const char* kVersion = "0.1.0";

struct ReportContext {
  const NameTable* names = nullptr;
  const StackDepot* stacks = nullptr;
  int pid = 0;
  int rank = -1;                  // launcher rank; -1 when not under one
  std::uint64_t suppressed = 0;   // findings dropped by suppressions
  ParkedBlockStats parked;        // record_stream advisory input
  bool advisory = true;           // print the parked-block advisory
  // Latent free-before-wait (Checker::latent): counted on the closing line,
  // note-level results in JSON and SARIF. Null: none.
  const std::vector<Finding>* latent = nullptr;
  bool strict = false;            // strict=1 was in force
  // A replayed trace written before version 3 that has caching blocks but
  // not one kernel use of a block on its allocation stream: its runtime
  // left those uses out, so a reuse of a block on its allocation stream is
  // not seen and the unordered free counts as latent. Said once: on the
  // closing line, in JSON's summary, as a SARIF notification and run
  // property.
  bool missing_own_stream_uses = false;
  // What the producer said it did not model (kUnchecked events), each once:
  // a limit of this run's check, not a finding. On the closing line, in
  // JSON's summary ("unchecked") and as a SARIF notification.
  std::vector<std::string> unchecked;
  // timeline=DIR: per finding, "DIR/finding-N" when its pictures (.json and
  // .svg) were written, "" otherwise; empty when none were asked for.
  std::vector<std::string> timelines;
};

void write_report(ReportFormat format, const std::vector<Finding>& findings,
                  const ReportContext& context, std::ostream& out);
void write_text_report(const std::vector<Finding>& findings, const ReportContext& context,
                       std::ostream& out);
void write_json_report(const std::vector<Finding>& findings, const ReportContext& context,
                       std::ostream& out);
void write_sarif_report(const std::vector<Finding>& findings, const ReportContext& context,
                        std::ostream& out);

// Pieces shared by the writers (report.cpp).

// "stream 0x55d0", or "stream 0 (legacy default)".
std::string describe_stream(StreamId stream);
// An address or id as the reports write it: "0x7f0000001000".
std::string hex(std::uint64_t v);
// The findings a JSON or SARIF report lists: `findings`, then the latent
// ones (context.latent) when there are any.
std::vector<const Finding*> reported_findings(const std::vector<Finding>& findings,
                                              const ReportContext& context);
// `kernel "ampere_sgemm"`, `memcpy`, `collective "ncclAllGather"`, ...
std::string describe_use(const UseInfo& use, const NameTable& names);
// "read" / "write" / "" (unknown access).
std::string_view access_word(Access access);
// "read" / "write" / "unknown": JSON and SARIF.
std::string_view access_name(Access access);
std::string_view what_word(UseWhat what);        // "kernel", "memcpy", ...
std::string_view free_kind_word(FreeKind kind);  // "caching-allocator free", ...
std::string_view alloc_kind_word(AllocKind kind);  // "caching-allocator allocation", ...
// Headline words: "unordered free", "use after free", "use before ready".
std::string_view headline(FindingKind kind);
// The one-sentence fix for `finding`.
std::string fix_advice(const Finding& finding);
// The note on a use before ready whose write is a synchronous copy from
// pageable host memory: the Runtime API's rule, quoted in one line.
std::string_view pageable_copy_note();
// The stack that locates the finding: the free for an unordered free, the
// use otherwise.
StackId primary_stack(const Finding& finding);
// Index of the frame that best locates a stack: the innermost one without a
// role (frame_roles: not the CUDA runtime, the driver, a kernel launch
// stub, an annotation, PyTorch's call machinery or xstream-check itself)
// that has a source file, else the innermost one without a role (a native
// frame without symbols: its module and offset), else the innermost with a
// source file that is not xstream-check's, else the innermost that is not.
// frames.size() when there is none (no frames, or only xstream-check's).
// Like ThreadSanitizer's interceptor frames, those frames name the API or
// the tool, not the user's code.
std::size_t locating_frame(const std::vector<Frame>& frames);
// The roles of xstream-check's own frames and of PyTorch's Python call
// machinery (frame_role).
inline constexpr std::string_view kOwnFrameRole = "xstream-check";
inline constexpr std::string_view kTorchMachineryRole = "PyTorch machinery";
// A frame naming the autograd node whose backward did the work; the frames
// after it are the forward call that created the node.
inline constexpr std::string_view kAutogradNodeRole = "autograd node; created by the forward call below";
// What an API frame is, for marking it in a stack: "CUDA runtime", "CUDA
// driver", "kernel launch stub", "annotation"; empty for the user's frames.
std::string_view cuda_frame_role(const Frame& frame);
// cuda_frame_role, and also kOwnFrameRole for frames of xstream-check's
// runtime and adapter (module libxstream_check.so or libxstream_torch.so,
// or a function in namespace xsc::) and kTorchMachineryRole for PyTorch's
// Python frames that forward a call: files of the installed torch package
// (".../site-packages/torch/" or a relative "torch/") nn/modules/module.py,
// utils/hooks.py, autograd/*.py and _dynamo/*.py.
std::string_view frame_role(const Frame& frame);
// Each frame's role in `frames`: frame_role, and a kernel's host-side
// function that nvcc's launch stub was inlined into is a launch stub too.
std::vector<std::string_view> frame_roles(const std::vector<Frame>& frames);
// The number of latent free-before-wait sites in `context` (0 when none).
std::uint64_t latent_sites(const ReportContext& context);
// ", K latent free-before-wait (strict=1 reports them)" when there are
// latent ones, "" otherwise: the closing line's tail.
std::string latent_summary(const ReportContext& context);
// The sentence saying what a trace without own-stream uses hides, and that
// --strict shows those frees; "" unless context.missing_own_stream_uses.
std::string own_stream_uses_notice(const ReportContext& context);
// "; not checked: A; B" for context.unchecked, "" when empty: the closing
// line's tail.
std::string unchecked_summary(const ReportContext& context);
// "FILE:LINE in FUNC" for SUMMARY lines; "<unknown>" without frames.
std::string site_text(const std::vector<Frame>& frames);
// "func /path/file.py:57", "func (module+0x1a2b)" or "<unknown>".
std::string frame_text(const Frame& frame);
// Stable across runs, processes and ranks (no addresses, pids or handles):
// 16 hex digits derived from the kind, the use's name and the free and use
// sites.
std::string fingerprint(const Finding& finding, const NameTable& names, const StackDepot& stacks);

}  // namespace xsc
