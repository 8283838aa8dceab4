"""Local benchmark: runs sum.py and prints its runtime."""
import os
import subprocess
import sys
import time

n = os.environ.get("TINY_N", "200000")
start = time.perf_counter()
out = subprocess.run([sys.executable, "/app/sum.py", n], capture_output=True, text=True, check=True).stdout
elapsed = time.perf_counter() - start
expected = int(n) * (int(n) + 1) // 2
print(f"correct: {int(out) == expected}")
print(f"runtime_seconds: {elapsed:.4f}")
