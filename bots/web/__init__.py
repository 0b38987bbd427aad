"""The report pages: one check's full report on the web, at ``/c/<check id>``.

``page`` builds what a page shows from a stored report, ``svg`` draws its charts,
``render`` turns both into HTML through Jinja2, and ``app`` serves them with aiohttp
(``zofia web``, or inside a bot's process).
"""
