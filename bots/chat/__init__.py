"""The chat flows Telegram and Discord share, over the renderers (``bots.render``): a
check from a message to its card (``check_flow``), follow-up questions, corrections and
reviews, quiet groups, cooldowns and each private chat's turns (the post a message
stands for is read by the service: ``bots.service.posts``), the store's calls off the
event loop, how a log line names a
chat, and the first-run example. The platforms (``bots.telegram``, ``bots.discord``) wire
them to their own APIs."""
