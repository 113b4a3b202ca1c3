// Checks the layouts of runtime/cuda/param_access/param_fill.h against a
// real library's kernels: reads lines "MANGLED SIZE SIZE ..." (each
// kernel's parameter sizes, as test/torch/Inputs/kernel_param_sizes.py
// reads them from the library's cubins) and, per PyTorch struct the layouts
// know, counts the kernels taking it and those whose parameter the layout
// recognized with that size. A struct whose layout did not match this
// library's kernels shows as fewer recognized than found.
//
//   param_fill_check < sizes.txt
//
// Output, one line per struct found: "NAME: R/N kernels" (and per lambda of
// the non-contiguous elementwise path, whose captures lead with an
// OffsetCalculator), and for ReduceOp
// the kernels left whole by design (over c10::complex<double>, whose
// alignment may pad the tail) apart: "ReduceOp: R/N kernels (C over
// c10::complex<double> scanned whole)". For the foreach kernels' metadata,
// how many of the recognized have lists labelled read (kernel_operand_reads:
// their functor says which lists it only loads): "TensorListMetadata: R/N
// kernels, L with lists read". With --unlabelled, each recognized foreach
// kernel with no list read is listed as well ("unlabelled: MANGLED"), for a
// reader to tell the functors that store only from those the rule misses.
// Exit 1 on a malformed line or argument.
#include <cstdio>
#include <cstring>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "runtime/cuda/param_access/param_fill.h"

namespace {

using xsc::rt::ParamFill;

struct Layout {
  const char* mangled;  // the struct's name as it appears in mangled names
  const char* name;
  ParamFill::Kind kind;  // what a recognized parameter of it reads
  // Where set, the kernel's name must start with it instead: the lambda of
  // the non-contiguous elementwise path is known by where it is declared.
  const char* prefix = nullptr;
};

constexpr Layout kLayouts[] = {
    {"25CatArrInputTensorMetadata", "CatArrInputTensorMetadata", ParamFill::Kind::kGridYEntries},
    {"18TensorListMetadata", "TensorListMetadata", ParamFill::Kind::kBlockTensors},
    {"28TensorListScalarListMetadata", "TensorListScalarListMetadata",
     ParamFill::Kind::kBlockTensors},
    {"32FusedOptimizerTensorListMetadata", "FusedOptimizerTensorListMetadata",
     ParamFill::Kind::kBlockTensors},
    {"19TensorListAddresses", "TensorListAddresses", ParamFill::Kind::kGridXEntries},
    {"8ReduceOp", "ReduceOp", ParamFill::Kind::kReduction},
    {"10TensorInfo", "TensorInfo", ParamFill::Kind::kFixedEntries},
    {"16TensorSizeStride", "TensorSizeStride", ParamFill::Kind::kFixedEntries},
    {"16OffsetCalculator", "OffsetCalculator", ParamFill::Kind::kFixedEntries},
    {"EZNS0_22gpu_kernel_impl_nocastI", "gpu_kernel_impl_nocast's lambda",
     ParamFill::Kind::kLeadingOffsetCalculator, "_ZN2at6native18elementwise_kernelILi"},
    {"EZNS0_15gpu_kernel_implI", "gpu_kernel_impl's lambda",
     ParamFill::Kind::kLeadingOffsetCalculator, "_ZN2at6native18elementwise_kernelILi"},
};

// Whether the kernel `name` takes the layout's struct (or, with a prefix,
// is such a kernel over such a lambda: elementwise_kernel<nt, vt, ...>,
// its two integer arguments followed by the lambda's local name).
bool takes(const std::string& name, const Layout& layout) {
  if (layout.prefix == nullptr) return name.find(layout.mangled) != std::string::npos;
  if (name.rfind(layout.prefix, 0) != 0) return false;
  const std::size_t vt = name.find("ELi", std::strlen(layout.prefix));
  if (vt == std::string::npos) return false;
  const std::size_t end = name.find('E', vt + 3);
  return end != std::string::npos && name.compare(end, std::strlen(layout.mangled),
                                                  layout.mangled) == 0;
}

struct Count {
  int found = 0, recognized = 0, complex_double = 0, lists_read = 0;
};

}  // namespace

int main(int argc, char** argv) {
  bool list_unlabelled = false;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) != "--unlabelled") {
      std::fprintf(stderr, "param_fill_check: unknown argument '%s'\n", argv[i]);
      return 1;
    }
    list_unlabelled = true;
  }
  std::map<std::string, Count> counts;
  std::string line;
  int number = 0;
  while (std::getline(std::cin, line)) {
    ++number;
    std::istringstream fields(line);
    std::string name, field;
    fields >> name;
    std::vector<std::uint32_t> sizes;
    while (fields >> field) {
      char* end = nullptr;
      const unsigned long size = std::strtoul(field.c_str(), &end, 10);
      if (end == field.c_str() || *end != '\0' || size > 1u << 20) {
        std::fprintf(stderr, "param_fill_check: line %d: '%s' is not a parameter size\n", number,
                     field.c_str());
        return 1;
      }
      sizes.push_back(static_cast<std::uint32_t>(size));
    }
    if (name.empty()) continue;
    std::vector<ParamFill> fills;
    xsc::rt::kernel_param_fills(name, sizes.data(), sizes.size(), &fills);
    for (const Layout& layout : kLayouts) {
      if (!takes(name, layout)) continue;
      Count& count = counts[layout.name];
      ++count.found;
      bool recognized = false;
      for (const ParamFill& fill : fills) recognized = recognized || fill.kind == layout.kind;
      if (recognized && layout.kind == ParamFill::Kind::kBlockTensors) {
        std::vector<xsc::rt::ReadSpan> reads;
        if (xsc::rt::kernel_operand_reads(name, sizes.data(), sizes.size(), &reads))
          ++count.lists_read;
        else if (list_unlabelled)
          std::printf("unlabelled: %s\n", name.c_str());
      }
      if (recognized) ++count.recognized;
      // c10::complex<double> mangles as N3c107complexIdEE.
      else if (layout.kind == ParamFill::Kind::kReduction &&
               name.find("3c107complexIdE") != std::string::npos)
        ++count.complex_double;
    }
  }
  for (const Layout& layout : kLayouts) {
    auto it = counts.find(layout.name);
    if (it == counts.end()) continue;
    const Count& c = it->second;
    std::printf("%s: %d/%d kernels", layout.name, c.recognized, c.found - c.complex_double);
    if (layout.kind == ParamFill::Kind::kReduction)
      std::printf(" (%d over c10::complex<double> scanned whole)", c.complex_double);
    if (layout.kind == ParamFill::Kind::kBlockTensors)
      std::printf(", %d with lists read", c.lists_read);
    std::printf("\n");
  }
  return 0;
}
