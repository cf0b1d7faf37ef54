"""The actor runtime: actors with typed handlers and timers, msgpack-encoded messages,
clocks (virtual time, asyncio) and transports (local in-process, later aiohttp).

Nodes, overlays and policies see only :class:`~dgdrf.runtime.actor.Actor` and its
context; they never learn which clock or transport they run on.
"""
