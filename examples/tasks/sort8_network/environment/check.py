"""Check /app/network.json: is it a sorting network for 8 inputs, and how big?

Read-only. By the 0-1 principle a comparator network sorts every input if
and only if it sorts all 2**8 inputs of zeros and ones.
"""
import json
import os
import sys

APP_DIR = os.path.dirname(os.path.abspath(__file__))
WIRES = 8


def load(path):
    with open(path) as handle:
        network = json.load(handle)
    if not isinstance(network, list):
        raise ValueError("the network must be a JSON list of [i, j] pairs")
    for pair in network:
        if (
            not isinstance(pair, list)
            or len(pair) != 2
            or not all(isinstance(v, int) and not isinstance(v, bool) for v in pair)
            or not 0 <= pair[0] < pair[1] < WIRES
        ):
            raise ValueError(f"bad comparator {pair!r}: expected [i, j] with 0 <= i < j < {WIRES}")
    return network


def first_unsorted(network):
    """An input of zeros and ones the network leaves unsorted, or None."""
    for bits in range(2 ** WIRES):
        values = [(bits >> k) & 1 for k in range(WIRES)]
        for i, j in network:
            if values[i] > values[j]:
                values[i], values[j] = values[j], values[i]
        if any(values[k] > values[k + 1] for k in range(WIRES - 1)):
            return [(bits >> k) & 1 for k in range(WIRES)]
    return None


def main():
    try:
        network = load(os.path.join(APP_DIR, "network.json"))
    except (OSError, ValueError) as error:
        print(f"error: {error}")
        print("valid: no")
        return 1
    failing = first_unsorted(network)
    if failing is not None:
        print(f"not sorted: input {failing}")
        print("valid: no")
        return 1
    print("valid: yes")
    print(f"comparator_count: {len(network)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
