"""Verifier for scaling_forecast: the full-scale loss of the final answer, normalised.

Final-only: no score log; the reward is the final submission's score.
"""
import json
import math
import os
import sys

APP_DIR = os.environ.get("APP_DIR", "/app")
LOGS_DIR = os.environ.get("LOGS_DIR", "/logs")
START, REFERENCE, OFFSET = 4.0, 1.8079, 1.5


def full_scale_loss(width, learning_rate):
    distance = ((math.log2(width) - 10) / 2) ** 2 + (math.log10(learning_rate) + 3) ** 2
    return 1.6 + 2.4 * (1 - math.exp(-distance))


def normalised(loss):
    low, high = math.log(START - OFFSET), math.log(REFERENCE - OFFSET)
    return max(0.0, (math.log(loss - OFFSET) - low) / (high - low))


def main():
    out = os.path.join(LOGS_DIR, "verifier")
    os.makedirs(out, exist_ok=True)
    try:
        with open(os.path.join(APP_DIR, "answer.json")) as handle:
            answer = json.load(handle)
        width, rate = int(answer["width"]), float(answer["learning_rate"])
        if width < 8 or rate <= 0 or not math.isfinite(rate):
            raise ValueError("width must be at least 8 and the learning rate positive")
    except OSError:
        fields = {"reward": 0.0, "reason": "no_output_file", "correctness": False}
    except (ValueError, KeyError, TypeError) as error:
        fields = {"reward": 0.0, "reason": "invalid_answer", "correctness": False, "error": str(error)[:300]}
    else:
        loss = full_scale_loss(width, rate)
        fields = {"reward": round(normalised(loss), 6), "correctness": True, "metric": round(loss, 6),
                  "start_score": START, "reference_score": REFERENCE}
    with open(os.path.join(out, "reward.json"), "w") as handle:
        json.dump(fields, handle)
    print(json.dumps(fields))
    return 0


if __name__ == "__main__":
    sys.exit(main())
