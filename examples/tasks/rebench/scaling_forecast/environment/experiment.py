"""Small-scale experiments: a small model's loss, 0.25 above the full-scale one at the same settings. Read-only."""
import argparse
import math
import sys


def loss(width, learning_rate):
    """The loss surface: 1.6 at width 1024 and learning rate 1e-3, rising to 4.0 far from it."""
    distance = ((math.log2(width) - 10) / 2) ** 2 + (math.log10(learning_rate) + 3) ** 2
    return 1.6 + 2.4 * (1 - math.exp(-distance))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--width", type=int, default=64)
    parser.add_argument("--lr", type=float, default=0.1)
    args = parser.parse_args()
    if args.width < 8 or args.lr <= 0:
        print("error: width must be at least 8 and the learning rate positive")
        return 1
    print(f"small_scale_loss: {loss(args.width, args.lr) + 0.25:.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
