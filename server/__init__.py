"""Flower Garden Race server: transport (WebSockets) -> protocol -> services -> store (Redis)."""
