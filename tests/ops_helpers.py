"""Helpers of the operations tests: reading /metrics and /ready over HTTP."""

from __future__ import annotations

import asyncio
import json
import ssl
import urllib.error
import urllib.request

from prometheus_client.parser import text_string_to_metric_families

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def _get(url: str, context: ssl.SSLContext | None = None) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=5, context=context) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


async def http_get(url: str, context: ssl.SSLContext | None = None) -> tuple[int, bytes]:
    """Status and body of a GET (error statuses included)."""
    return await asyncio.to_thread(_get, url, context)


async def scrape(base: str) -> Samples:
    """Every sample of ``base``/metrics: (name, sorted labels) -> value."""
    status, body = await http_get(f"{base}/metrics")
    assert status == 200, body
    samples: Samples = {}
    for family in text_string_to_metric_families(body.decode()):
        for sample in family.samples:
            samples[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return samples


def value(samples: Samples, name: str, **labels: str) -> float:
    """One sample's value (0 when absent: a labelled counter appears once first counted)."""
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


def delta(before: Samples, after: Samples, name: str, **labels: str) -> float:
    """How much a sample grew between two scrapes."""
    return value(after, name, **labels) - value(before, name, **labels)


async def ready(base: str) -> tuple[int, dict[str, str]]:
    """Status and document of ``base``/ready."""
    status, body = await http_get(f"{base}/ready")
    return status, json.loads(body)


def http_base(ws_url: str) -> str:
    """The HTTP address of a server's WebSocket URL."""
    return ws_url.replace("wss://", "https://").replace("ws://", "http://")
