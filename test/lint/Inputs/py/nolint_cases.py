# Suppressions, as on the C++ side.
import torch


def suppressed_on_the_line(side):
    buf = torch.empty(64, device="cuda"); side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        buf.add_(1)
    del buf  # NOLINT(xstream-unordered-free)


def suppressed_on_the_line_above(side):
    buf = torch.empty(64, device="cuda"); side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        buf.add_(1)
    # NOLINTNEXTLINE(xstream-*)
    del buf


def other_rule_named(side):
    buf = torch.empty(64, device="cuda"); side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        buf.add_(1)
    del buf  # NOLINT(xstream-free-before-wait)


def bare_nolint(side):
    buf = torch.empty(64, device="cuda"); side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        buf.add_(1)
    del buf  # NOLINT
