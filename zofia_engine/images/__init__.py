"""Photo posts (AgentFact's image agent): safe decoding, the text in the picture,
fact-checkers' labels, a vision model's look, and reverse image search.

Importing this package loads nothing heavy: Pillow and the OCR models are imported
by the modules that use them.
"""
