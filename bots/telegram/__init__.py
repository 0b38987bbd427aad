"""The Telegram bot (python-telegram-bot). Importing this package imports nothing
from python-telegram-bot; its modules do."""
