"""The full-screen terminal app (Textual): racing, watching, replaying and the lobby."""
