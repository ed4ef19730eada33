"""One table of the terminal's words per language (:mod:`client.words` chooses one): ``WORDS``, key -> text."""
