// The fatal-signal report: when the checked process dies of SIGSEGV, SIGBUS,
// SIGILL, SIGFPE or SIGABRT, say so on stderr with the faulting address and
// the dying thread's stack, then die of the same signal (the exit status the
// program would have had without the runtime).
//
// Only signals whose disposition is still the default at load time are
// taken: a handler the application (or Python's faulthandler, which chains
// to the previous handler) installs later replaces or precedes this one.
// XSC_HANDLE_SEGV=0 turns the report off.
//
// The handler may run while the faulting code holds malloc's, stdio's or the
// session's locks, so it formats into a static buffer and writes with
// write(2). Naming frames uses dladdr, which takes the dynamic loader's
// lock: a crash inside dlopen itself would stop after the raw addresses.
#include <dlfcn.h>
#include <signal.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "runtime/host/signal_context.h"
#include "runtime/rtl.h"

namespace xsc::rt {
namespace {

constexpr int kFatalSignals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};
constexpr int kMaxFrames = 64;
constexpr std::size_t kAltStackBytes = 64 * 1024;

std::atomic<bool> reporting{false};

// One line at a time, built without allocating.
class LineWriter {
 public:
  void text(const char* s) {
    while (s != nullptr && *s != '\0' && used_ < sizeof(buffer_) - 1) buffer_[used_++] = *s++;
  }
  void hex(std::uint64_t value) {
    char digits[16];
    int n = 0;
    do {
      digits[n++] = "0123456789abcdef"[value & 0xf];
      value >>= 4;
    } while (value != 0 && n < 16);
    text("0x");
    while (n > 0 && used_ < sizeof(buffer_) - 1) buffer_[used_++] = digits[--n];
  }
  void dec(std::uint64_t value) {
    char digits[20];
    int n = 0;
    do {
      digits[n++] = static_cast<char>('0' + value % 10);
      value /= 10;
    } while (value != 0 && n < 20);
    while (n > 0 && used_ < sizeof(buffer_) - 1) buffer_[used_++] = digits[--n];
  }
  void flush() {
    buffer_[used_++] = '\n';
    std::size_t done = 0;
    while (done < used_) {
      const ssize_t w = write(STDERR_FILENO, buffer_ + done, used_ - done);
      if (w <= 0) break;
      done += static_cast<std::size_t>(w);
    }
    used_ = 0;
  }

 private:
  char buffer_[1024];
  std::size_t used_ = 0;
};

LineWriter line;  // static: the handler must not need stack for it

const char* signal_name(int sig) {
  switch (sig) {
    case SIGSEGV: return "SIGSEGV";
    case SIGBUS: return "SIGBUS";
    case SIGILL: return "SIGILL";
    case SIGFPE: return "SIGFPE";
    case SIGABRT: return "SIGABRT";
    default: return "signal";
  }
}

// "#N 0xPC in symbol+0xOFF (module+0xOFF)", as far as dladdr can tell.
void write_frame(int index, std::uint64_t pc) {
  line.text("    #");
  line.dec(static_cast<std::uint64_t>(index));
  line.text(" ");
  line.hex(pc);
  Dl_info info{};
  // Return addresses point after the call: look up the call itself.
  const std::uint64_t lookup = index > 0 && pc > 0 ? pc - 1 : pc;
  if (dladdr(reinterpret_cast<void*>(lookup), &info) != 0) {
    if (info.dli_sname != nullptr && info.dli_saddr != nullptr) {
      line.text(" in ");
      line.text(info.dli_sname);
      line.text("+");
      line.hex(pc - reinterpret_cast<std::uint64_t>(info.dli_saddr));
    }
    if (info.dli_fname != nullptr) {
      line.text(" (");
      line.text(info.dli_fname);
      line.text("+");
      line.hex(pc - reinterpret_cast<std::uint64_t>(info.dli_fbase));
      line.text(")");
    }
  }
  line.flush();
}

void on_fatal_signal(int sig, siginfo_t* info, void* context) {
  // Die as the program would have: the default action, then the signal
  // again (still blocked here, so it is delivered when the handler returns;
  // a fault re-executes the instruction and hits the default action).
  struct sigaction dfl{};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  sigaction(sig, &dfl, nullptr);
  if (reporting.exchange(true)) {
    raise(sig);
    return;
  }
  const std::uint64_t pc = faulting_pc(context);
  line.text("xstream-check: caught ");
  line.text(signal_name(sig));
  if (info != nullptr && info->si_code > 0) {
    // Sent by the kernel for a fault: si_addr is the faulting address.
    line.text(" at ");
    line.hex(reinterpret_cast<std::uint64_t>(info->si_addr));
  } else {
    // raise/kill/abort, or another handler (Python's faulthandler) passing
    // the signal on after its own report: the fault's address is gone.
    line.text(" sent by pid ");
    line.dec(info != nullptr ? static_cast<std::uint64_t>(info->si_pid) : 0);
  }
  line.text(" (pc ");
  line.hex(pc);
  line.text(", pid ");
  line.dec(static_cast<std::uint64_t>(getpid()));
  line.text(", tid ");
  line.dec(static_cast<std::uint64_t>(syscall(SYS_gettid)));
  line.text(")");
  line.flush();
  if (pc != 0) {
    line.text("  faulting instruction:");
    line.flush();
    write_frame(0, pc);
  }
  line.text("  stack of the dying thread (from the handler; frames above the signal frame "
            "are the fault's callers):");
  line.flush();
  static void* frames[kMaxFrames];
  const int n = raw_backtrace(frames, kMaxFrames);
  for (int i = 0; i < n; ++i) write_frame(i + 1, reinterpret_cast<std::uint64_t>(frames[i]));
  raise(sig);
}

bool report_wanted() {
  const char* value = std::getenv("XSC_HANDLE_SEGV");
  return value == nullptr || std::strcmp(value, "0") != 0;
}

}  // namespace

std::uint64_t faulting_pc(const void* raw_context) {
  if (raw_context == nullptr) return 0;
  const auto* uc = static_cast<const ucontext_t*>(raw_context);
#if defined(__x86_64__)
  return static_cast<std::uint64_t>(uc->uc_mcontext.gregs[REG_RIP]);
#elif defined(__aarch64__)
  return static_cast<std::uint64_t>(uc->uc_mcontext.pc);
#else
  (void)uc;
  return 0;
#endif
}

void install_fatal_signal_report() {
  if (!report_wanted()) return;
  // Loads the unwinder now: dlopen inside the handler could deadlock.
  void* warm[4];
  (void)raw_backtrace(warm, 4);
  // A stack overflow leaves no stack for the handler: give this (the main)
  // thread an alternate one unless the program already set one.
  stack_t current{};
  if (sigaltstack(nullptr, &current) == 0 && (current.ss_flags & SS_DISABLE) != 0) {
    static char* alt_stack = static_cast<char*>(std::malloc(kAltStackBytes));
    if (alt_stack != nullptr) {
      stack_t alt{};
      alt.ss_sp = alt_stack;
      alt.ss_size = kAltStackBytes;
      sigaltstack(&alt, nullptr);
    }
  }
  for (int sig : kFatalSignals) {
    struct sigaction old{};
    if (sigaction(sig, nullptr, &old) != 0) continue;
    if ((old.sa_flags & SA_SIGINFO) != 0 || old.sa_handler != SIG_DFL) continue;
    struct sigaction action{};
    action.sa_sigaction = on_fatal_signal;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigaction(sig, &action, nullptr);
  }
}

}  // namespace xsc::rt
