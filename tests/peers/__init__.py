"""What the tests run against: ``servers`` speak a real protocol on 127.0.0.1, ``fakes``
stand in at our own ports in process, ``fixtures`` are the shared fixtures and set-ups."""
