"""Our own Harbor environment: a bubblewrap sandbox on the worker host."""
