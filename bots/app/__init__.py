"""The composition root, the top floor of ``bots``: a deployment's settings composed
from every layer's section (``settings``), the check service built from them
(``runtime``), the bots taking their ``deliver`` jobs (``deliveries``), a process's
health endpoint and log format (``health``, ``json_logs``), and each chat platform's
start-up (``telegram``, ``discord``). Nothing below imports it; the CLI starts it."""
