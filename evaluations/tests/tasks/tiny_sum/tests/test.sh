#!/bin/bash
# Grades /app/sum.py: correct and with a closed form -> 1.0; correct loop -> 0.0.
python3 - <<'PY'
import hashlib, json, subprocess
reward, fields = 0.0, {}
if hashlib.sha256(open("/app/bench.py", "rb").read()).hexdigest() != hashlib.sha256(open("/orig/bench.py", "rb").read()).hexdigest():
    fields["reason"] = "bench_modified"
else:
    out = subprocess.run(["python3", "/app/sum.py", "1000"], capture_output=True, text=True).stdout.strip()
    correct = out == "500500"
    fast = "range(" not in open("/app/sum.py").read()
    reward = 1.0 if correct and fast else 0.0
    fields.update({"correctness": correct, "metric": None if not correct else (0.01 if fast else 1.0)})
json.dump({"reward": reward, **fields}, open("/logs/verifier/reward.json", "w"))
print("graded", reward, fields)
PY
