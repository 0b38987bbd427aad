"""The check service, the bottom floor of the bots: what every front-end shares.

Built on the store (:mod:`storage`) and the engine's ports, below the renderers and the
platforms: :class:`~bots.service.checks.CheckService` (``submit``, repeats and near
repeats, admission and the rate limits, the engine runs of this process on fair slots,
follow-up questions, reviews and corrections, chat operations), its records
(:class:`~bots.service.handles.Requester`, :class:`~bots.service.handles.Outcome`,
:class:`~bots.service.limits.Admission`) and, on PostgreSQL, the job queue
(:mod:`bots.service.queue`). It imports nothing else from ``bots``.
"""
