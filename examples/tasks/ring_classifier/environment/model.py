"""Edit this file: the classifier that evaluate.py and the verifier train.

fit(X, y) gets rows of features [x, y, z] (floats) and labels (0 or 1) and
returns any model object; predict(model, X) returns one label per row.
The starter is logistic regression on the raw features.
"""
import math


def fit(X, y, epochs=200, learning_rate=0.1):
    weights = [0.0] * len(X[0])
    bias = 0.0
    for _ in range(epochs):
        grad_w = [0.0] * len(weights)
        grad_b = 0.0
        for row, label in zip(X, y):
            z = bias + sum(w * v for w, v in zip(weights, row))
            p = 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))
            error = p - label
            grad_b += error
            for k, v in enumerate(row):
                grad_w[k] += error * v
        bias -= learning_rate * grad_b / len(X)
        weights = [w - learning_rate * g / len(X) for w, g in zip(weights, grad_w)]
    return weights, bias


def predict(model, X):
    weights, bias = model
    return [int(bias + sum(w * v for w, v in zip(weights, row)) > 0) for row in X]
