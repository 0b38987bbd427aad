"""What turns a check's report or outcome into text, before any platform markup: the
verdict card and its notes, the report's sections, the sentences and words a chat is
told in its language (with the gettext catalogues in ``locales/``), links, the privacy
text, progress lines and splitting a long text. It sits on the check service
(``bots.service``) and knows no chat: the chat flows (``bots.chat``) and every platform
render through it."""
