"""The starting solution, kept for calibration: every window summed from scratch."""


def window_sums(values, width):
    sums = []
    for start in range(len(values) - width + 1):
        total = 0
        for offset in range(width):
            total += values[start + offset]
        sums.append(total)
    return sums
