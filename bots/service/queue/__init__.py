"""Checks past one process: a job queue (Procrastinate) and events on the shared PostgreSQL.

With ``storage.url`` on PostgreSQL, the check service consults a
:class:`~bots.service.queue.delivery.QueuedDelivery`, and writes the check and its job in one
transaction; ``zofia worker`` processes run them
(:mod:`bots.service.queue.worker`); progress and completion come back by ``NOTIFY``
(:mod:`bots.service.queue.events`); each card is posted by a ``deliver`` job that any bot
replica may run (:mod:`storage.deliveries`). On SQLite none of this is used.
"""
