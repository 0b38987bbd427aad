"""Image posts (AgentFact's image agent): safe decoding, the text in the image, the
words fact-checkers stamp (a lead only, :mod:`.grounds`), a vision model's look, and
reverse image search.

Importing this package loads nothing heavy: Pillow and the OCR models are imported
by the modules that use them.
"""
