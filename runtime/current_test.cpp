// Test attribution (include/xstream_check/annotations.h): the test current
// in the process, fed as a kTest event so that a recorded trace carries it,
// and the report of a test's findings while the program runs.
#define XSC_ANNOTATION_WEAK /* strong here */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Waddress"
#include "xstream_check/annotations.h"
#pragma GCC diagnostic pop

#include <cstdlib>
#include <cstring>
#include <optional>
#include <sstream>
#include <string>

#include "runtime/rtl.h"

using namespace xsc;

// One marker for the whole process, not per thread: a test runner runs one
// test at a time in a process, and the frees its test causes on other
// threads (PyTorch's autograd workers, a data loader's) belong to that test.
extern "C" __attribute__((visibility("default"))) int xsc_set_current_test(const char* test_id) {
  if (!rt::enabled()) return -1;
  rt::Locked locked;
  if (!locked) return -1;
  Event event;
  event.kind = EventKind::kTest;
  if (test_id != nullptr && *test_id != '\0') event.name = locked.names().intern(test_id);
  locked.emit(event);
  return 0;
}

extern "C" __attribute__((visibility("default"))) char* xsc_findings_report(const char* test_id,
                                                                           const char* format,
                                                                           size_t first,
                                                                           size_t* total) {
  ReportFormat report = ReportFormat::kText;
  if (format != nullptr && !parse_report_format(format, &report)) return nullptr;
  if (!rt::enabled()) return nullptr;
  std::ostringstream out;
  std::size_t count = 0;
  {
    rt::Locked locked;
    if (!locked) return nullptr;
    std::optional<NameId> test;
    if (test_id != nullptr) test = *test_id != '\0' ? locked.names().intern(test_id) : kNoName;
    count = locked.session().report_findings(report, test, first, out);
  }
  if (total != nullptr) *total = count;
  const std::string text = out.str();
  char* copy = static_cast<char*>(std::malloc(text.size() + 1));
  if (copy == nullptr) return nullptr;
  std::memcpy(copy, text.c_str(), text.size() + 1);
  return copy;
}

extern "C" __attribute__((visibility("default"))) void xsc_release_report(char* report) {
  std::free(report);
}
