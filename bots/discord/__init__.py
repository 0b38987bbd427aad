"""The Discord bot (discord.py). Importing this package imports nothing from
discord.py; its modules do. Absolute imports keep ``import discord`` the library."""
