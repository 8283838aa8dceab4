"""How train.csv and heldout.csv were made (run once; kept for the record).

Points (x, y) uniform in a square, plus a feature z of pure noise; the label
is 1 inside a circle that covers half the square, with 5% of labels flipped.
A linear model cannot do better than chance; one that sees x**2 + y**2 can
reach about 0.95.
"""
import math
import random
import sys


def rows(rng, count):
    radius_squared = (3.2 * 3.2) / (2 * math.pi)
    for _ in range(count):
        x = rng.uniform(-1.6, 1.6)
        y = rng.uniform(-1.6, 1.6)
        z = rng.gauss(0.0, 1.0)
        label = int(x * x + y * y < radius_squared)
        if rng.random() < 0.05:
            label = 1 - label
        yield f"{x:.4f},{y:.4f},{z:.4f},{label}"


def write(path, rng, count):
    with open(path, "w") as handle:
        handle.write("x,y,z,label\n")
        for line in rows(rng, count):
            handle.write(line + "\n")


if __name__ == "__main__":
    environment, tests = sys.argv[1], sys.argv[2]
    rng = random.Random(20260510)
    write(f"{environment}/data/train.csv", rng, 600)
    write(f"{tests}/heldout.csv", rng, 400)
