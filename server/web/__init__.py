"""The browser client: its static files and the HTTP handler that serves them (docs/WEB.md)."""
