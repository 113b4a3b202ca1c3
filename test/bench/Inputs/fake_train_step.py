"""Stands in for bench/real/train_step.py in test/bench/real-run.test: prints
its XSC_STEP, XSC_WORDS, XSC_SCHED and XSC_PHASES lines without a GPU. Under the
runtime (LD_PRELOAD set) its step takes 1.5 ms instead of 1.0 and its
import and setup phases 0.25 s and 0.5 s longer."""
import os
import sys
import time

now = time.time()
checked = bool(os.environ.get("LD_PRELOAD"))
extra_import, extra_setup = (0.25, 0.5) if checked else (0.0, 0.0)
marks = {"started": now - 3.0}
marks["imported"] = marks["started"] + 0.5 + extra_import
marks["ready"] = marks["imported"] + 1.0 + extra_setup
marks["warm"] = marks["ready"] + 0.2
marks["stepped"] = marks["warm"] + 0.1
marks["ended"] = marks["stepped"] + 0.05
steps = int(sys.argv[sys.argv.index("--steps") + 1])
# --batch N: N/64 times the step's time (the 64 sequences' default).
scale = int(sys.argv[sys.argv.index("--batch") + 1]) / 64 if "--batch" in sys.argv else 1.0
print(f"XSC_STEP workload={sys.argv[1]} steady_ms={(1.5 if checked else 1.0) * scale:.3f} warmup_s=0.200 "
      f"steps={steps} host_ms=0.900"
      + (" quartiles_ms=1.400/1.700 halves_ms=1.600/1.450" if checked else ""))
if checked:
    print("XSC_WORDS filtered=3.0 looked_up=10.0 missed=0.0 handed_over=7.0")
    print("XSC_VIEW live=40 other=12 other_by_inheritance=9 mixed_residue_mib=96.0")
print("XSC_SCHED python3=%.3f/0.010/2.0/0.5 pt_autograd_0=0.400/0.000/3.0/0.0"
      % (1.2 if checked else 0.8))
print("XSC_PHASES " + " ".join(f"{k}={v:.6f}" for k, v in marks.items()))
